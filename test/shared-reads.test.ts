import { describe, expect, test } from 'vitest';
import { SharedReads } from '../src/data/shared-reads.js';

// A read shared by the callers asking at once: the database answers one read per round, and no caller gets an
// answer read before it asked (a read in flight may predate a write the caller has already seen committed).

/** A read the test finishes by hand, numbered in the order it started. */
function manualReads() {
  const started: { n: number; finish: (value: number) => void; fail: (error: Error) => void }[] = [];
  const read = () => new Promise<number>((resolve, reject) => started.push({ n: started.length + 1, finish: resolve, fail: reject }));
  return { started, read };
}
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('shared reads', () => {
  test('callers arriving while a read is in flight share the next read, which starts after it', async () => {
    const reads = new SharedReads<number>();
    const { started, read } = manualReads();
    const first = reads.read('page', read);
    expect(started).toHaveLength(1);
    // Asked while read 1 is in flight: they must not get read 1's answer.
    const second = reads.read('page', read);
    const third = reads.read('page', read);
    await tick();
    expect(started).toHaveLength(1);
    started[0].finish(1);
    expect(await first).toBe(1);
    await tick();
    expect(started).toHaveLength(2); // one read for both waiting callers
    started[1].finish(2);
    expect(await second).toBe(2);
    expect(await third).toBe(2);
    // Nothing in flight: a caller starts its own read at once.
    const fourth = reads.read('page', read);
    expect(started).toHaveLength(3);
    started[2].finish(3);
    expect(await fourth).toBe(3);
  });

  test('different keys never share, and a failure reaches only the callers of that read', async () => {
    const reads = new SharedReads<number>();
    const { started, read } = manualReads();
    const a = reads.read('a', read);
    const b = reads.read('b', read);
    expect(started).toHaveLength(2);
    const afterA = reads.read('a', read);
    started[0].fail(new Error('connection lost'));
    await expect(a).rejects.toThrow('connection lost');
    await tick();
    expect(started).toHaveLength(3); // the waiting caller gets a read of its own, not the failure
    started[2].finish(30);
    started[1].finish(20);
    expect(await afterA).toBe(30);
    expect(await b).toBe(20);
  });

  test('a read that throws at once is a rejection, and beyond the key limit reads are not shared', async () => {
    const reads = new SharedReads<number>(1);
    await expect(reads.read('x', () => { throw new Error('bad statement'); })).rejects.toThrow('bad statement');
    const { started, read } = manualReads();
    const one = reads.read('one', read);
    const two = reads.read('two', read);
    const twoAgain = reads.read('two', read);
    expect(started).toHaveLength(3);
    started.forEach((s) => s.finish(s.n));
    expect([await one, await two, await twoAgain]).toEqual([1, 2, 3]);
  });
});
