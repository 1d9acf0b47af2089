/**
 * A failed start says why: a broker that answered and then failed the connect (TLS or SASL
 * settings that do not match its listener) is not reported as a broker that never answered.
 */
import { KafkaPublisher } from '../src';
import { quickRetryConfig, testConnection } from './support';

// With kafkajs the error is ferry's (KafkajsGate), which names the reason it knows. With
// @platformatic/kafka it is the client's own, whose reason lies under a connection error under
// two MultipleErrors ("listApis failed 6 times." > "Cannot connect to any broker." > "Connection
// to … failed." > "SASL mechanism plain not supported.").
test('SASL against a listener without it fails the start, naming SASL', async () => {
  const connection = testConnection({
    // The client retries its connect 100 ms apart (quickRetryConfig), every retry failing the same.
    kafkaConfig: {
      sasl: { mechanism: 'plain', username: 'ferry', password: 'ferry' },
      ...quickRetryConfig(),
    },
  });
  const publisher = new KafkaPublisher(connection, { defaultDestination: 'never-created' });
  try {
    const failure = await publisher.connect().then(
      () => null,
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({ code: 'FERRY_TRANSPORT_ERROR' });
    expect(String(failure)).toMatch(/SASL/);
    expect(String(failure)).not.toMatch(/no answer/);
  } finally {
    await publisher.close();
  }
}, 30_000);
