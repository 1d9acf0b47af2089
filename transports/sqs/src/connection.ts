import { GetQueueUrlCommand, ListQueuesCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { Logger } from '@ferry/core';
import { requestDeadline } from './deadline';
import { closedError, transportError } from './errors';
import {
  SETUP_TIMEOUT_MS,
  resolveConnectionOptions,
  type ConnectionOptions,
  type ResolvedConnectionOptions,
} from './options';

/**
 * One SQS client shared by publishers, consumers and topology helpers, plus a cache of
 * queue-name → URL lookups. SQS is request/response over HTTP, so there is no session to
 * reconnect: a failed request is retried by the SDK (`maxAttempts`) and then reported.
 * connect() checks the endpoint answers; connect() and close() are safe to call twice.
 */
export class SqsConnection {
  readonly options: ResolvedConnectionOptions;
  private sqs: SQSClient | null = null;
  private connecting: Promise<void> | null = null;
  private closed = false;
  private readonly urls = new Map<string, Promise<string>>();

  constructor(options: ConnectionOptions = {}) {
    this.options = resolveConnectionOptions(options);
  }

  get logger(): Logger {
    return this.options.logger;
  }

  /** The SDK client; creates it lazily, so connect() is optional before the first request. */
  get client(): SQSClient {
    if (this.closed) throw closedError('SQS connection');
    if (!this.sqs) this.sqs = this.options.client ?? this.createClient();
    return this.sqs;
  }

  /** Checks the endpoint answers a ListQueues; resolves at once when already connected. */
  async connect(): Promise<void> {
    if (this.closed) throw closedError('SQS connection');
    this.connecting ??= this.client
      .send(new ListQueuesCommand({ MaxResults: 1 }), { abortSignal: requestDeadline(SETUP_TIMEOUT_MS) })
      .then(() => undefined)
      .catch((error: unknown) => {
        this.connecting = null;
        throw transportError('SQS endpoint did not answer', error);
      });
    return this.connecting;
  }

  /**
   * The URL of a queue given by URL or name. Names are resolved with GetQueueUrl once and
   * cached; a failed lookup is not cached, so a queue created later is found. The lookup ends
   * with `signal`, and after SETUP_TIMEOUT_MS at the latest.
   */
  async queueUrl(nameOrUrl: string, signal?: AbortSignal): Promise<string> {
    if (/^https?:\/\//.test(nameOrUrl)) return nameOrUrl;
    let url = this.urls.get(nameOrUrl);
    if (!url) {
      url = this.client
        .send(new GetQueueUrlCommand({ QueueName: nameOrUrl }), {
          abortSignal: requestDeadline(SETUP_TIMEOUT_MS, signal),
        })
        .then((output) => {
          if (!output.QueueUrl) throw new Error(`GetQueueUrl returned no URL for ${nameOrUrl}`);
          return output.QueueUrl;
        });
      this.urls.set(nameOrUrl, url);
      url.catch(() => this.urls.delete(nameOrUrl));
    }
    return url;
  }

  /** Forgets a cached URL (after its queue was deleted). */
  forgetQueue(nameOrUrl: string): void {
    this.urls.delete(nameOrUrl);
    for (const [name, url] of this.urls) {
      void url.then(
        (value) => {
          if (value === nameOrUrl) this.urls.delete(name);
        },
        () => undefined,
      );
    }
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Destroys the client this connection created (a client passed in is left open). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.sqs && !this.options.client) this.sqs.destroy();
    this.sqs = null;
    this.urls.clear();
  }

  private createClient(): SQSClient {
    const { endpoint, region, credentials, maxAttempts } = this.options;
    return new SQSClient({
      region,
      maxAttempts,
      ...(endpoint !== undefined ? { endpoint } : {}),
      ...(credentials !== undefined ? { credentials } : {}),
    });
  }
}
