import { clock, tickingClock } from '../src/clock.js';

// Every timestamp the service writes is later than the previous one: tests order by time without sleeping.
clock.now = tickingClock();
