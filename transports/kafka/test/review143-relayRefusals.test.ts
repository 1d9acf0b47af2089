/**
 * Review 143: a refusal that depends on the relay (its credentials, its idempotent producer's
 * state, the client's protocol versions, its quota), not on the event, was `retryable`, so a
 * relay-wide condition turned every event FAILED after its attempts. Now each is `unavailable`
 * (no attempt spent, the relay's circuit open), with a reason saying what to fix, on both
 * clients (their errors built from their own classes, in the shapes they throw). The
 * refusals that can be one record's keep their outcome, so no key stalls for ever. And a
 * consumer given refused credentials on kafkajs retried until ready()'s deadline (FERRY_TIMEOUT),
 * the refusal hidden: probed against a private SASL/PLAIN broker, @platformatic/kafka's ready()
 * rejected FERRY_PERMANENT_FAILURE naming SASL_AUTHENTICATION_FAILED, kafkajs's did not (its
 * KafkaJSSASLAuthenticationError carries no protocol type).
 */
import { AuthenticationError, NetworkError, ResponseError } from '@platformatic/kafka';
import { KafkaJSNonRetriableError, KafkaJSSASLAuthenticationError } from 'kafkajs';
import { classifyKafkaError, operatorRefusal, transportError } from '../src/errors';
import { kafkajsProduceError, platformaticProduceError } from './produceErrors';

const kafkajs = (type: string, code: number) => kafkajsProduceError(type, code, true);
const platformatic = platformaticProduceError;

const RELAY_REFUSALS: readonly [string, number][] = [
  ['INVALID_TIMESTAMP', 32],
  ['UNSUPPORTED_SASL_MECHANISM', 33],
  ['ILLEGAL_SASL_STATE', 34],
  ['UNSUPPORTED_VERSION', 35],
  ['OUT_OF_ORDER_SEQUENCE_NUMBER', 45],
  ['INVALID_PRODUCER_EPOCH', 47],
  ['INVALID_PRODUCER_ID_MAPPING', 49],
  ['TRANSACTIONAL_ID_AUTHORIZATION_FAILED', 53],
  ['SASL_AUTHENTICATION_FAILED', 58],
  ['UNKNOWN_PRODUCER_ID', 59],
  ['THROTTLING_QUOTA_EXCEEDED', 89],
  ['PRODUCER_FENCED', 90],
  ['COORDINATOR_LOAD_IN_PROGRESS', 14],
  ['COORDINATOR_NOT_AVAILABLE', 15],
  ['NOT_COORDINATOR', 16],
];

describe.each([
  ['kafkajs', kafkajs],
  ['@platformatic/kafka', (_: string, code: number) => platformatic(code)],
])('%s', (_, make) => {
  test.each(RELAY_REFUSALS)(
    '%s refuses every event alike: unavailable, the reason naming it',
    (type, code) => {
      const classified = classifyKafkaError(make(type, code));
      expect(classified).toMatchObject({ unavailable: true, kafkaType: type });
      expect(classified.message).toContain(`${type}: `);
    },
  );

  test.each([
    ['INVALID_RECORD', 87, { unavailable: false, retriable: false }],
    ['MESSAGE_TOO_LARGE', 10, { unavailable: false, retriable: false }],
    ['CORRUPT_MESSAGE', 2, { unavailable: false, retriable: true }],
    ['UNKNOWN_TOPIC_OR_PARTITION', 3, { unavailable: false, retriable: true }],
    ['TOPIC_AUTHORIZATION_FAILED', 29, { unavailable: false, retriable: true }],
  ] as const)('%s, which can be one record or topic, is not unavailable', (type, code, outcome) => {
    expect(classifyKafkaError(make(type, code))).toMatchObject({ ...outcome, kafkaType: type });
  });
});

test("INVALID_TIMESTAMP's reason says what to fix: the relay's clock or the topic's timestamp bounds", () => {
  const { message } = classifyKafkaError(platformatic(32));
  expect(message).toContain("the relay's clock");
  expect(message).toContain('message.timestamp.before.max.ms / message.timestamp.after.max.ms');
});

// kafkajs's SASL authenticator throws this; its retrier rethrows it as a KafkaJSNonRetriableError
// whose cause it is.
// (kafkajs's typings declare neither constructor's arguments.)
const SaslError = KafkaJSSASLAuthenticationError as unknown as new (message: string) => Error;
const NonRetriable = KafkaJSNonRetriableError as unknown as new (
  e: Error,
  options: { cause: Error },
) => Error;
const kafkajsRefused = new SaslError(
  'SASL PLAIN authentication failed: Authentication failed: Invalid username or password',
);
const kafkajsRetried = new NonRetriable(kafkajsRefused, { cause: kafkajsRefused });
// @platformatic/kafka's connection: an AuthenticationError over the SaslAuthenticate answer, under
// the NetworkError of the connection; and alone (a SCRAM exchange it refuses itself).
const platformaticRefused = new NetworkError('Connection to 127.0.0.1:19192 failed.', {
  cause: new AuthenticationError('SASL authentication failed.', {
    cause: new ResponseError(36, 2, { '': [58, 'Authentication failed: Invalid username or password'] }, {}),
  }),
});
const platformaticScram = new AuthenticationError('Invalid server signature.');

test.each([
  ['kafkajs', kafkajsRefused],
  ['kafkajs, retried', kafkajsRetried],
  ['@platformatic/kafka', platformaticRefused],
  ['@platformatic/kafka, SCRAM', platformaticScram],
])('%s: refused credentials on a send are unavailable, the reason naming them', (_, error) => {
  const classified = classifyKafkaError(error);
  expect(classified).toMatchObject({ unavailable: true, kafkaType: 'SASL_AUTHENTICATION_FAILED' });
  expect(classified.message).toContain('the credentials were refused');
});

test.each([
  ['kafkajs', kafkajsRefused],
  ['kafkajs, retried', kafkajsRetried],
  ['@platformatic/kafka', platformaticRefused],
])(
  "%s: a consumer's start refused its credentials is an operator's refusal (ready() rejects at once)",
  (_, error) => {
    const start = transportError('connecting the dead-letter producer failed', error);
    expect(operatorRefusal(start)).toBe('SASL_AUTHENTICATION_FAILED: the credentials were refused');
  },
);
