#!/usr/bin/env node
// `npm run test:stress`: the whole suite, three times in a row, while two busy loops keep two cores busy:
// no test may depend on the machine's speed. Prints each run's result and duration; exits non-zero if any run failed.
// Arguments after `--` go to every `vitest run` (e.g. `npm run test:stress -- --exclude 'test/e2e/**'`).
// Environment: STRESS_RUNS (default 3), STRESS_LOOPS (default 2); DATABASE_URL/REDIS_URL as for `npm test`.
import { spawn } from 'node:child_process';

const RUNS = Number(process.env.STRESS_RUNS ?? 3);
const LOOPS = Number(process.env.STRESS_LOOPS ?? 2);
const extra = process.argv.slice(2);

/** The busy loops: plain child processes, each spinning one core until it is killed. */
const loops = Array.from({ length: LOOPS }, () => spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }));
let current;

/** Stops the busy loops (and a vitest run still going) whatever happens: normal end, error, Ctrl-C, kill. */
function stopAll() {
  for (const loop of loops) if (loop.exitCode === null && loop.signalCode === null) loop.kill('SIGKILL');
  if (current && current.exitCode === null && current.signalCode === null) current.kill('SIGTERM');
}
process.on('exit', stopAll);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    console.error(`\ntest:stress: ${signal}, stopping the busy loops and the run`);
    stopAll();
    process.exit(130);
  });
}
process.on('uncaughtException', (err) => {
  console.error(err);
  stopAll();
  process.exit(1);
});

/** One `npx vitest run`, its output passed through; answers its exit code and duration. */
function run() {
  return new Promise((resolve) => {
    const started = process.hrtime.bigint();
    current = spawn('npx', ['vitest', 'run', ...extra], { stdio: 'inherit' });
    const done = (code) => resolve({ code, seconds: Number(process.hrtime.bigint() - started) / 1e9 });
    current.on('exit', (code, signal) => done(code ?? (signal ? 1 : 0)));
    current.on('error', (err) => {
      console.error(err);
      done(1);
    });
  });
}

console.log(`test:stress: ${LOOPS} busy loop(s) started (pids ${loops.map((l) => l.pid).join(', ')}); ${RUNS} run(s) of the whole suite`);
const results = [];
for (let i = 1; i <= RUNS; i++) {
  console.log(`\ntest:stress: run ${i} of ${RUNS}`);
  const result = await run();
  results.push(result);
  console.log(`test:stress: run ${i} ${result.code === 0 ? 'passed' : `FAILED (exit code ${result.code})`} in ${result.seconds.toFixed(1)} s`);
}
stopAll();

console.log('\ntest:stress: summary');
results.forEach((r, i) => console.log(`  run ${i + 1}: ${r.code === 0 ? 'passed' : 'FAILED'}  ${r.seconds.toFixed(1)} s`));
const failed = results.filter((r) => r.code !== 0).length;
console.log(failed ? `test:stress: ${failed} of ${RUNS} run(s) failed` : `test:stress: all ${RUNS} runs passed`);
process.exitCode = failed ? 1 : 0;
