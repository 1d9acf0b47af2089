/**
 * A failed start says why: a broker that answered and then failed the connect (TLS or SASL
 * settings that do not match its listener) is not reported as a broker that never answered.
 */
import { KafkaPublisher } from '../src';
import { kafkaClient } from './clients';
import { testConnection } from './support';

// @platformatic/kafka's connect errors are its own ("listApis failed 6 times. (Connection to …
// failed.)"); with kafkajs the error is ferry's (KafkajsGate), which names the reason it knows.
(kafkaClient() === 'kafkajs' ? test : test.skip)(
  'SASL against a listener without it fails naming the failed requests, not "no answer"',
  async () => {
    const connection = testConnection({
      kafkaConfig: { sasl: { mechanism: 'plain', username: 'ferry', password: 'ferry' } },
    });
    const publisher = new KafkaPublisher(connection, { defaultDestination: 'never-created' });
    try {
      const failure = await publisher.connect().then(
        () => null,
        (error: unknown) => error,
      );
      expect(String(failure)).toMatch(/SASL/);
      expect(String(failure)).not.toMatch(/no answer/);
    } finally {
      await publisher.close();
    }
  },
);
