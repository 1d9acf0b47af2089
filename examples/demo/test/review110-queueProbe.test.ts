import amqp, { type ChannelModel } from 'amqplib';
import { QueueProbe } from '../src/broker';

const amqpUrl = process.env.FERRY_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

describe('review 110: QueueProbe.open whose channel cannot be created', () => {
  afterEach(() => jest.restoreAllMocks());

  it('rejects with that failure and closes the connection it opened', async () => {
    const opened: ChannelModel[] = [];
    const connect = amqp.connect.bind(amqp);
    jest.spyOn(amqp, 'connect').mockImplementation(async (url: string) => {
      const connection = await connect(url);
      opened.push(connection);
      jest.spyOn(connection, 'createChannel').mockRejectedValue(new Error('no channel (review 110)'));
      return connection;
    });
    await expect(QueueProbe.open(amqpUrl, 'ferry.demo.r110.unused')).rejects.toThrow(
      'no channel (review 110)',
    );
    expect(opened).toHaveLength(1);
    const connection = opened[0] as ChannelModel;
    // Closed: a second close() is refused ("Connection closed"); an open one would close now.
    await expect(connection.close()).rejects.toThrow(/closed/i);
  });
});
