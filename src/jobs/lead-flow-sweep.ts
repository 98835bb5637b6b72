import { clock } from '../clock.js';
import { sweepLeadFlow } from '../modules/crm/lead-flow/sweep.js';
import { defineJob } from './registry.js';

/** Every minute: claims whose time passed go to their fallback (and the other lead-flow sweeps). */
export const leadFlowSweep = defineJob('lead-flow-sweep', async (_data, services) => {
  const moved = await sweepLeadFlow(services, clock.now());
  if (Object.values(moved).some(Boolean)) services.log.info(moved, 'lead flow swept');
}, { schedule: '* * * * *' });
