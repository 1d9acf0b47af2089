// Defaults for every test process; each can be overridden from the environment.
process.env.FERRY_DATABASE_URL ??= 'postgresql://postgres@127.0.0.1:5432/test';
process.env.FERRY_AMQP_URL ??= 'amqp://guest:guest@127.0.0.1:5672';
process.env.FERRY_KAFKA_BROKERS ??= '127.0.0.1:9092';
process.env.FERRY_SQS_ENDPOINT ??= 'http://127.0.0.1:9324';
process.env.FERRY_LOG_LEVEL ??= 'error';

// A test that runs a suite in a child jest with one change (review34's altered publisher) names
// the module that makes it here, so the child runs the parent's own config: ts-jest keys its
// transform cache on the whole project config, and a child with a config of its own transpiled
// every file it loads again (most of its CPU in a fresh clone).
if (process.env.FERRY_TEST_CHILD_SETUP) require(process.env.FERRY_TEST_CHILD_SETUP);
