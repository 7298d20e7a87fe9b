// The NATS buckets' reads through an election (store/nats/bucket-read.ts): a try that gets no answer is given up
// after its quiet time and tried again; past waitMs the read fails with the store's UNAVAILABLE; the store's own
// verdict (NATS unreachable) is passed on at once. The registry, the statistics and the decisions read this way.
import assert from 'node:assert/strict';
import test from 'node:test';
import type { KV } from '@nats-io/kv';
import { ThreatcolError } from '../../src/errors.js';
import { readWithRetries, unavailableRead } from '../../src/store/nats/bucket-read.js';

const bucket = {} as KV;
const unavailable = unavailableRead('sensors', () => 'not connected');

test('a try that gets no answer is given up and the read tried again: the second try answers', async () => {
  let tries = 0;
  const aborted: boolean[] = [];
  const started = Date.now();
  const read = await readWithRetries({
    open: async () => bucket,
    once: (_kv, answered, signal) => {
      tries++;
      if (tries === 1)
        return new Promise<string>((_, reject) => {
          signal.addEventListener('abort', () => {
            aborted.push(true);
            reject(new Error('given up'));
          });
        });
      answered();
      return Promise.resolve('every entry');
    },
    waitMs: 3000,
    unavailable,
  });
  assert.equal(read, 'every entry');
  assert.equal(tries, 2);
  assert.deepEqual(aborted, [true], 'the silent try was told it was given up');
  // Its quiet time is a third of waitMs (1 s), then a pause of 100 ms.
  assert.ok(Date.now() - started >= 1000, `answered after ${Date.now() - started} ms`);
});

test('no try answers within waitMs: UNAVAILABLE, naming the bucket, the tries and why', async () => {
  let tries = 0;
  const started = Date.now();
  await assert.rejects(
    readWithRetries({
      open: async () => bucket,
      once: () => {
        tries++;
        return Promise.reject(new Error('the read ended before every entry was delivered'));
      },
      waitMs: 1000,
      unavailable,
    }),
    (error: unknown) => {
      assert.ok(error instanceof ThreatcolError);
      assert.equal(error.code, 'UNAVAILABLE');
      // Why first (NATS known unreachable: what the admin must fix), then the bucket, the tries, the last error.
      assert.match(
        error.message,
        /^not connected; NATS bucket sensors: no answer to a read within \d+ ms \(\d+ tries\): the read ended before every entry was delivered$/,
      );
      return true;
    },
  );
  const took = Date.now() - started;
  assert.ok(tries >= 4, `${tries} tries in ${took} ms`);
  assert.ok(took >= 1000 && took < 3000, `gave up after ${took} ms`);
});

test("the store's own verdict while opening the bucket (NATS unreachable) is passed on, not tried again", async () => {
  let opens = 0;
  const down = new ThreatcolError('UNAVAILABLE', 'NATS unreachable for 5000 ms');
  await assert.rejects(
    readWithRetries({
      open: () => {
        opens++;
        return Promise.reject(down);
      },
      once: async () => 'never',
      waitMs: 3000,
      unavailable,
    }),
    (error: unknown) => error === down,
  );
  assert.equal(opens, 1);
});
