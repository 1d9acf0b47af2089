// The order jest starts test files in. With two workers the run ends when the later one ends, so
// the long files must start first: jest's own sequencer does that only from its cache of earlier
// runs (slowest first), and runs files it has no time for first, largest file first. A clean
// clone (CI) has no cache, so a 3-minute fault suite could start last and run alone at the end.
// Here files jest has no time for get one from LONG_FILES (seconds, from a CI run's "slowest test
// files"), or LONG_DIRS; everything else keeps jest's order.
const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

const ROOT = path.join(__dirname, '..');

/**
 * Files that took tens of seconds in CI or here (seconds; a guess is enough, the order is what
 * counts). The platformatic/ twins are three-line files that jest's size order would start last.
 */
const LONG_FILES = {
  'packaging/quickstart.test.ts': 96,
  'fault-tests/broker-recovery/kafka-restart.test.ts': 96,
  'packages/core/test/inbox/throughput.test.ts': 84,
  'packages/core/test/outbox/claimCost.test.ts': 80,
  'fault-tests/broker-recovery/kafka-outage.test.ts': 72,
  'fault-tests/broker-recovery/rabbitmq-retry-and-dlq.test.ts': 62,
  'fault-tests/broker-recovery/rabbitmq-restart.test.ts': 55,
  'packages/core/test/redact/boundedTime.test.ts': 37,
  'packages/core/test/inbox/statsCost.test.ts': 38,
  'packages/core/test/outbox/statsCost.test.ts': 24,
  'transports/kafka/test/platformatic/compressed.test.ts': 33,
  'transports/kafka/test/platformatic/conformance.test.ts': 18,
  'transports/kafka/test/platformatic/foreignProducer.test.ts': 18,
  'transports/kafka/test/platformatic/publisher.test.ts': 15,
};

/** Folders whose files start private brokers, clusters or builds: tens of seconds each. */
const LONG_DIRS = { 'fault-tests/': 30, 'packaging/': 20 };

/** Seconds a file is expected to take when jest has no time of its own for it, or null. */
function hint(testPath) {
  const file = path.relative(ROOT, testPath).split(path.sep).join('/');
  if (file in LONG_FILES) return LONG_FILES[file];
  const dir = Object.keys(LONG_DIRS).find((prefix) => file.startsWith(prefix));
  return dir === undefined ? null : LONG_DIRS[dir];
}

class LongFirstSequencer extends Sequencer {
  sort(tests) {
    // jest's order: files that failed last time, files without a time (largest first), the rest
    // slowest first. It also sets test.duration (ms) from its cache.
    const ordered = super.sort(tests);
    const failed = ordered.filter((test) => this.hasFailed(test));
    const rest = ordered.filter((test) => !this.hasFailed(test));
    const estimate = (test) => {
      if (test.duration != null) return test.duration;
      const seconds = hint(test.path);
      return seconds === null ? null : seconds * 1000;
    };
    // Known to be long (from jest's cache or the hints), longest first; then jest's order.
    const long = rest
      .filter((test) => (estimate(test) ?? 0) >= 10_000)
      .sort((a, b) => estimate(b) - estimate(a));
    return [...failed, ...long, ...rest.filter((test) => !long.includes(test))];
  }
}

module.exports = LongFirstSequencer;
