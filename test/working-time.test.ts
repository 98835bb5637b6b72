import { describe, expect, test } from 'vitest';
import { addWorkingDays, addWorkingHours, addWorkingMinutes, nextWorkingMoment, type WorkingTime } from '../src/modules/crm/lead-flow/working-time.js';

// Working time: pure arithmetic on instants, in the configured zone (its daylight saving time included).

const manila: WorkingTime = { timeZone: 'Asia/Manila', start: 9 * 60, end: 18 * 60, days: [1, 2, 3, 4, 5] };
const at = (iso: string) => new Date(iso);
const iso = (date: Date) => date.toISOString();

describe('the next working moment', () => {
  test('inside working hours: the same instant', () => {
    expect(iso(nextWorkingMoment(at('2030-01-07T10:15:30+08:00'), manila))).toBe(iso(at('2030-01-07T10:15:30+08:00'))); // Monday
    expect(iso(nextWorkingMoment(at('2030-01-07T09:00:00+08:00'), manila))).toBe(iso(at('2030-01-07T09:00:00+08:00')));
  });
  test('before the day starts: its start; at or after its end: the next working day\'s start; weekends skipped', () => {
    expect(iso(nextWorkingMoment(at('2030-01-07T07:00:00+08:00'), manila))).toBe(iso(at('2030-01-07T09:00:00+08:00')));
    expect(iso(nextWorkingMoment(at('2030-01-07T18:00:00+08:00'), manila))).toBe(iso(at('2030-01-08T09:00:00+08:00')));
    expect(iso(nextWorkingMoment(at('2030-01-11T19:00:00+08:00'), manila))).toBe(iso(at('2030-01-14T09:00:00+08:00'))); // Friday evening → Monday
    expect(iso(nextWorkingMoment(at('2030-01-12T12:00:00+08:00'), manila))).toBe(iso(at('2030-01-14T09:00:00+08:00'))); // Saturday
    expect(iso(nextWorkingMoment(at('2030-01-10T23:00:00Z'), manila))).toBe(iso(at('2030-01-11T09:00:00+08:00'))); // Thursday in UTC, Friday 07:00 in Manila
  });
  test('a single working day a week, and a day that ends at midnight', () => {
    const sundays: WorkingTime = { timeZone: 'UTC', start: 0, end: 24 * 60, days: [7] };
    expect(iso(nextWorkingMoment(at('2030-01-07T10:00:00Z'), sundays))).toBe('2030-01-13T00:00:00.000Z');
    expect(iso(nextWorkingMoment(at('2030-01-13T23:59:59Z'), sundays))).toBe('2030-01-13T23:59:59.000Z');
    expect(iso(nextWorkingMoment(at('2030-01-14T00:00:00Z'), sundays))).toBe('2030-01-20T00:00:00.000Z');
  });
});

describe('working hours and minutes', () => {
  test('within a day, across the end of a day and across a weekend', () => {
    expect(iso(addWorkingMinutes(at('2030-01-07T10:00:00+08:00'), 15, manila))).toBe(iso(at('2030-01-07T10:15:00+08:00')));
    expect(iso(addWorkingHours(at('2030-01-07T17:00:00+08:00'), 1, manila))).toBe(iso(at('2030-01-07T18:00:00+08:00')));
    expect(iso(addWorkingHours(at('2030-01-07T17:00:00+08:00'), 2, manila))).toBe(iso(at('2030-01-08T10:00:00+08:00')));
    expect(iso(addWorkingHours(at('2030-01-11T17:30:00+08:00'), 1, manila))).toBe(iso(at('2030-01-14T09:30:00+08:00')));
    expect(iso(addWorkingHours(at('2030-01-07T09:00:00+08:00'), 27, manila))).toBe(iso(at('2030-01-09T18:00:00+08:00'))); // three whole days: the end of the third
    expect(iso(addWorkingHours(at('2030-01-07T09:00:00+08:00'), 28, manila))).toBe(iso(at('2030-01-10T10:00:00+08:00')));
  });
  test('outside working hours the clock starts at the next working moment; 0 is that moment', () => {
    expect(iso(addWorkingMinutes(at('2030-01-12T22:00:00+08:00'), 15, manila))).toBe(iso(at('2030-01-14T09:15:00+08:00')));
    expect(iso(addWorkingMinutes(at('2030-01-07T06:00:00+08:00'), 0, manila))).toBe(iso(at('2030-01-07T09:00:00+08:00')));
    expect(iso(addWorkingMinutes(at('2030-01-07T11:00:00+08:00'), 0, manila))).toBe(iso(at('2030-01-07T11:00:00+08:00')));
  });
  test('across a change of daylight saving time: working hours, not elapsed hours', () => {
    const berlin: WorkingTime = { timeZone: 'Europe/Berlin', start: 9 * 60, end: 17 * 60, days: [1, 2, 3, 4, 5, 6, 7] };
    // Sunday 2030-03-31: clocks go from 02:00 to 03:00 (UTC+1 → UTC+2).
    expect(iso(addWorkingHours(at('2030-03-30T16:00:00+01:00'), 2, berlin))).toBe(iso(at('2030-03-31T10:00:00+02:00')));
    expect(iso(nextWorkingMoment(at('2030-03-31T01:30:00+01:00'), berlin))).toBe(iso(at('2030-03-31T09:00:00+02:00')));
    // Sunday 2030-10-27: back from 03:00 to 02:00.
    expect(iso(addWorkingHours(at('2030-10-26T16:30:00+02:00'), 1, berlin))).toBe(iso(at('2030-10-27T09:30:00+01:00')));
    const newYork: WorkingTime = { timeZone: 'America/New_York', start: 8 * 60, end: 20 * 60, days: [1, 2, 3, 4, 5] };
    expect(iso(addWorkingHours(at('2030-03-08T19:00:00-05:00'), 2, newYork))).toBe(iso(at('2030-03-11T09:00:00-04:00'))); // Friday → Monday after the change
  });
});

describe('working days', () => {
  test('the same local time that many working days later, weekends skipped', () => {
    expect(iso(addWorkingDays(at('2030-01-07T10:30:00+08:00'), 1, manila))).toBe(iso(at('2030-01-08T10:30:00+08:00')));
    expect(iso(addWorkingDays(at('2030-01-10T10:30:00+08:00'), 3, manila))).toBe(iso(at('2030-01-15T10:30:00+08:00'))); // Thursday → Tuesday
    expect(iso(addWorkingDays(at('2030-01-11T17:59:00+08:00'), 1, manila))).toBe(iso(at('2030-01-14T17:59:00+08:00')));
    expect(iso(addWorkingDays(at('2030-01-07T10:30:00+08:00'), 7, manila))).toBe(iso(at('2030-01-16T10:30:00+08:00')));
  });
  test('0 days: now, or the next working moment; outside hours, counted from the next working moment', () => {
    expect(iso(addWorkingDays(at('2030-01-07T10:30:00+08:00'), 0, manila))).toBe(iso(at('2030-01-07T10:30:00+08:00')));
    expect(iso(addWorkingDays(at('2030-01-11T20:00:00+08:00'), 0, manila))).toBe(iso(at('2030-01-14T09:00:00+08:00')));
    expect(iso(addWorkingDays(at('2030-01-11T20:00:00+08:00'), 1, manila))).toBe(iso(at('2030-01-15T09:00:00+08:00')));
    expect(iso(addWorkingDays(at('2030-01-12T11:00:00+08:00'), 2, manila))).toBe(iso(at('2030-01-16T09:00:00+08:00'))); // Saturday
  });
  test('the same local time across daylight saving time', () => {
    const berlin: WorkingTime = { timeZone: 'Europe/Berlin', start: 9 * 60, end: 17 * 60, days: [1, 2, 3, 4, 5] };
    expect(iso(addWorkingDays(at('2030-03-29T11:00:00+01:00'), 1, berlin))).toBe(iso(at('2030-04-01T11:00:00+02:00')));
    expect(iso(addWorkingDays(at('2030-10-25T11:00:00+02:00'), 1, berlin))).toBe(iso(at('2030-10-28T11:00:00+01:00')));
  });
});
