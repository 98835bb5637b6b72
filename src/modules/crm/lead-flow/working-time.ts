/**
 * Working time: the hours of the working days in one time zone (WORK_HOURS, WORK_DAYS, TASK_TIME_ZONE). Action plans'
 * follow-ups and speed-to-lead limits count in it, so a lead arriving on Friday evening is not late on Saturday.
 * Pure: instants in, instants out; every local reading goes through the zone's own rules (daylight saving included).
 */

export type WorkingTime = {
  timeZone: string;
  /** Minutes after local midnight the working day starts and ends (start before end). */
  start: number;
  end: number;
  /** ISO weekdays (Monday 1 … Sunday 7); at least one. */
  days: readonly number[];
};

const MINUTE = 60_000;
const formats = new Map<string, Intl.DateTimeFormat>();

/** The local date (`year`, `month`, `day`) of `at` in `timeZone`. */
function localDate(at: Date, timeZone: string) {
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' });
    formats.set(timeZone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(at).map((part) => [part.type, Number(part.value)]));
  return { year: parts.year, month: parts.month, day: parts.day, hour: parts.hour, minute: parts.minute, second: parts.second };
}

/** Local date arithmetic without a zone: the day `days` after, and its ISO weekday. */
type Day = { year: number; month: number; day: number };
const plusDays = (d: Day, days: number): Day => {
  const next = new Date(Date.UTC(d.year, d.month - 1, d.day + days));
  return { year: next.getUTCFullYear(), month: next.getUTCMonth() + 1, day: next.getUTCDate() };
};
const weekday = (d: Day) => new Date(Date.UTC(d.year, d.month - 1, d.day)).getUTCDay() || 7;

/** The instant the local clock in `timeZone` reads `minutes` after midnight of day `d` (in a gap of daylight saving time: the same offset as just before it). */
function instant(d: Day, minutes: number, timeZone: string): Date {
  const wall = Date.UTC(d.year, d.month - 1, d.day) + minutes * MINUTE;
  const offset = (at: number) => {
    const w = localDate(new Date(at), timeZone);
    return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) - Math.floor(at / 1000) * 1000;
  };
  // Twice: the offset at the first guess may differ from the offset at the answer (a change of daylight saving time).
  const guess = wall - offset(wall);
  return new Date(wall - offset(guess));
}

/** `at` when it falls in working hours, otherwise the start of the next working period. */
export function nextWorkingMoment(at: Date, time: WorkingTime): Date {
  let day: Day = localDate(at, time.timeZone);
  // A working day comes within a week (at least one weekday works); one more for a start in the last day's evening.
  for (let i = 0; i <= 8; i++, day = plusDays(day, 1)) {
    if (!time.days.includes(weekday(day))) continue;
    const start = instant(day, time.start, time.timeZone);
    if (at < start) return start;
    if (at < instant(day, time.end, time.timeZone)) return at;
  }
  throw new Error('working time has no working day');
}

/** The end of the working period `at` (a working moment) lies in. */
const periodEnd = (at: Date, time: WorkingTime) => instant(localDate(at, time.timeZone), time.end, time.timeZone);

/** `minutes` of working time after `at` (from the next working moment when `at` is outside working hours). */
export function addWorkingMinutes(at: Date, minutes: number, time: WorkingTime): Date {
  let left = Math.max(0, minutes) * MINUTE;
  let now = nextWorkingMoment(at, time);
  for (;;) {
    const end = periodEnd(now, time);
    if (now.getTime() + left <= end.getTime()) return new Date(now.getTime() + left);
    left -= end.getTime() - now.getTime();
    now = nextWorkingMoment(end, time);
  }
}

export const addWorkingHours = (at: Date, hours: number, time: WorkingTime): Date => addWorkingMinutes(at, hours * 60, time);

/**
 * `days` working days after `at`: counted from the next working moment, the same local time that many working days
 * later (moved into working hours if that local time does not fall in them, as on a day daylight saving time shifts).
 * 0: the next working moment itself.
 */
export function addWorkingDays(at: Date, days: number, time: WorkingTime): Date {
  const from = nextWorkingMoment(at, time);
  const local = localDate(from, time.timeZone);
  let day: Day = local;
  for (let counted = 0; counted < days;) {
    day = plusDays(day, 1);
    if (time.days.includes(weekday(day))) counted++;
  }
  const minutes = local.hour * 60 + local.minute + local.second / 60 + (from.getTime() % 1000) / MINUTE;
  return nextWorkingMoment(instant(day, minutes, time.timeZone), time);
}

/** Working time from the configuration. */
export const workingTimeOf = (config: { taskTimeZone: string; workHours: { start: number; end: number }; workDays: number[] }): WorkingTime =>
  ({ timeZone: config.taskTimeZone, start: config.workHours.start, end: config.workHours.end, days: config.workDays });
