import type { NoticeServices } from '../notices.js';
import { notifyFollowUpsDue } from './follow-ups-due.js';
import { enforceSpeedLimits } from './speed.js';

/** One part of the lead-flow sweep: what is due by `now`, done once across instances; answers how much it did. */
export type LeadFlowSweep = { name: string; run: (services: NoticeServices, now: Date) => Promise<number> };

/** Every part of the lead-flow sweep (the cron endpoint and the every-minute job run them in this order). */
export const LEAD_FLOW_SWEEPS: LeadFlowSweep[] = [
  { name: 'speed to lead', run: enforceSpeedLimits },
  { name: 'follow-ups due', run: notifyFollowUpsDue },
];
