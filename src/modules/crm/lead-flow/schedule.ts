import type { Config } from '../../../config.js';
import { type WorkingTime, workingTimeOf } from './working-time.js';

/**
 * The service's working time (WORK_HOURS, WORK_DAYS in TASK_TIME_ZONE), set from the configuration when the app is
 * built. Held here, as the clock is, because what reads it runs deep in a lead's transaction (`afterAssignment`),
 * which carries the data layer's `Work` and no services.
 */
export const workSchedule: { current: WorkingTime } = {
  current: { timeZone: 'Asia/Manila', start: 9 * 60, end: 18 * 60, days: [1, 2, 3, 4, 5] },
};

export function useWorkSchedule(config: Pick<Config, 'taskTimeZone' | 'workHours' | 'workDays'>) {
  workSchedule.current = workingTimeOf(config);
}
