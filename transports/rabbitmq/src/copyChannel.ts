import type { ChannelModel, ConfirmChannel } from 'amqplib';
import type { Logger } from '@ferry/core';
import { openConfirmChannel } from './connection';
import { untilAborted } from './waits';

/**
 * The confirm channel a consumer publishes its dead-letter and retry copies on, apart from the
 * channel it consumes on. RabbitMQ answers some publishes by closing the channel they were sent
 * on (a dead-letter exchange deleted while the consumer runs: 404 NOT_FOUND); on the consuming
 * channel that returned every unacked delivery of the prefetch window to the queue, and the same
 * copy closed the next channel too: a loop in which valid neighbours were redelivered again and
 * again. Here only this channel closes; the next copy opens another, which first declares the
 * consumer's topology again when it declares one (`declare`): a deleted dead-letter exchange is
 * back by the delivery's next attempt, as it was when the consuming channel re-attached. Acks
 * stay on the delivery's own channel (the only one that can settle it).
 */
export class CopyChannel {
  private opened: { readonly model: ChannelModel; readonly channel: Promise<ConfirmChannel> } | null = null;
  /** The topology being declared again after a returned copy (redeclare), while it runs. */
  private redeclaring: Promise<void> | null = null;

  constructor(
    /** The connection copies go out on now; null while there is none. */
    private readonly current: () => ChannelModel | null,
    private readonly logger: Logger,
    private readonly queue: string,
    /** Run on every copy channel as it opens (the consumer's topology), before any copy. */
    private readonly declare: ((channel: ConfirmChannel) => Promise<unknown>) | null = null,
  ) {}

  /**
   * The copy channel on the current connection, opened on first use; rejects when there is none,
   * or when `signal` aborts first (a connection gone silent never answers the open). `declared`:
   * the caller has just declared the topology on this connection (the consumer's attach, on the
   * channel it consumes on), so a channel this call opens does not declare it again (review 130:
   * every attach declared each queue, exchange and binding twice).
   */
  async get(signal: AbortSignal, declared = false): Promise<ConfirmChannel> {
    return untilAborted(this.channel(declared), signal, () =>
      signal.reason instanceof Error ? signal.reason : new Error('aborted'),
    );
  }

  private channel(declared = false): Promise<ConfirmChannel> {
    const model = this.current();
    if (model === null) return Promise.reject(new Error('no connection to the broker'));
    if (this.opened?.model === model) return this.opened.channel;
    const declare = declared ? null : this.declare;
    const channel = openConfirmChannel(model).then(async (opened) => {
      opened.on('error', (error: unknown) => {
        this.logger.warn({ err: error, queue: this.queue }, 'ferry.rabbitmq: copy channel error');
      });
      opened.once('close', () => this.forget(channel));
      if (declare) {
        try {
          await declare(opened);
        } catch (error) {
          void opened.close().catch(() => undefined);
          throw error;
        }
      }
      return opened;
    });
    channel.catch(() => this.forget(channel));
    this.opened = { model, channel };
    return channel;
  }

  /** Drops `channel` (closed, or no longer to be published on): the next copy opens another. */
  discard(channel: ConfirmChannel): void {
    const opened = this.opened;
    if (opened) {
      void opened.channel.then(
        (current) => {
          if (current === channel) this.forget(opened.channel);
        },
        () => undefined,
      );
    }
    void channel.close().catch(() => undefined);
  }

  /**
   * A copy published on `channel` came back unroutable (returned): a queue of the consumer's
   * topology was deleted while it runs (its dead-letter queue, a retry tier queue), the exchange
   * left routing to nothing. Unlike a deleted exchange (the broker closes the channel, and the
   * next one declares it), nothing closed the channel, and every copy came back for ever (review
   * 122). Declares the topology again on `channel`, so the delivery's next attempt finds the queue;
   * one declare at a time, nothing when the consumer declares no topology. Waited for until
   * `signal` aborts (it runs on); a declare the broker refuses closes the channel (logged).
   */
  async redeclare(channel: ConfirmChannel, signal: AbortSignal): Promise<void> {
    const declare = this.declare;
    if (!declare) return;
    this.redeclaring ??= declare(channel).then(
      () => undefined,
      (error: unknown) => {
        this.logger.warn(
          { err: error, queue: this.queue },
          'ferry.rabbitmq: declaring the topology again failed',
        );
      },
    );
    const declaring = this.redeclaring;
    void declaring.finally(() => {
      if (this.redeclaring === declaring) this.redeclaring = null;
    });
    await untilAborted(declaring, signal, () => new Error('aborted')).catch(() => undefined);
  }

  async close(): Promise<void> {
    const opened = this.opened;
    this.opened = null;
    if (opened) await opened.channel.then((channel) => channel.close()).catch(() => undefined);
  }

  private forget(channel: Promise<ConfirmChannel>): void {
    if (this.opened?.channel === channel) this.opened = null;
  }
}
