/**
 * The connection URL carries the broker password (amqp://user:password@host). No error ferry
 * raises and no log line it writes may carry it.
 */
import { RabbitConnection, RabbitPublisher } from '@ferry/rabbitmq';

describe('credentials in the connection URL', () => {
  it('refuses a URL that does not parse at configuration, without quoting its password', () => {
    // Node's URL parser would throw later, on every reconnect, with the whole input attached.
    for (const make of [
      () => new RabbitConnection({ url: 'amqp://guest:s3cret@127.0.0.1:notaport' }),
      () => new RabbitPublisher('amqp://guest:s3cret@127.0.0.1:notaport'),
    ]) {
      let thrown: unknown;
      try {
        make();
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toMatchObject({ code: 'FERRY_CONFIG_INVALID', option: 'url' });
      expect(JSON.stringify(thrown)).not.toContain('s3cret');
      expect(String((thrown as Error).message)).not.toContain('s3cret');
    }
  });
});
