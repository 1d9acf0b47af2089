// Defaults for every test process; each can be overridden from the environment.
process.env.FERRY_DATABASE_URL ??= 'postgresql://postgres@127.0.0.1:5432/test';
process.env.FERRY_AMQP_URL ??= 'amqp://guest:guest@127.0.0.1:5672';
process.env.FERRY_KAFKA_BROKERS ??= '127.0.0.1:9092';
process.env.FERRY_SQS_ENDPOINT ??= 'http://127.0.0.1:9324';
process.env.FERRY_LOG_LEVEL ??= 'error';
