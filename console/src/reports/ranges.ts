// The quick ranges of the reports' date filter: days `YYYY-MM-DD` counted from today, as calendar days.

const day = (date: Date) => date.toISOString().slice(0, 10);
const at = (text: string) => new Date(`${text}T00:00:00Z`);

/** `text` moved by `days` days. */
export function shiftDay(text: string, days: number): string {
  const date = at(text);
  date.setUTCDate(date.getUTCDate() + days);
  return day(date);
}

/** The first day of the month `months` months from the month of `text`. */
function monthStart(text: string, months = 0): string {
  const date = at(text);
  return day(new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + months, 1)));
}

export type Preset = { id: string; label: string; range: (today: string) => { from: string; to: string } };

export const PRESETS: Preset[] = [
  { id: 'last-30-days', label: 'Last 30 days', range: (today) => ({ from: shiftDay(today, -29), to: today }) },
  { id: 'this-month', label: 'This month', range: (today) => ({ from: monthStart(today), to: today }) },
  { id: 'last-month', label: 'Last month', range: (today) => ({ from: monthStart(today, -1), to: shiftDay(monthStart(today), -1) }) },
  {
    id: 'this-quarter',
    label: 'This quarter',
    range: (today) => ({ from: monthStart(today, -(at(today).getUTCMonth() % 3)), to: today }),
  },
  // A year back to the day after: at most 366 days, as the reports allow.
  { id: 'last-12-months', label: 'Last 12 months', range: (today) => ({ from: shiftDay(monthStart(today, -12), at(today).getUTCDate()), to: today }) },
];

/** The preset that gives exactly this range today, if one does. */
export const presetOf = (from: string, to: string, today: string) => PRESETS.find((preset) => {
  const range = preset.range(today);
  return range.from === from && range.to === to;
});
