import { GetQueueUrlCommand, ListQueuesCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { Logger } from '@ferry/core';
import { CredentialWatch } from './credentials';
import { requestDeadline, untilDeadline } from './deadline';
import { abandonedError, closedError, credentialsTimeout, requestError } from './errors';
import { LongPolls, ownAgents, type OwnAgents } from './longPolls';
import { abortableRetries, withRequestSignal } from './sdkRetries';
import { resolveConnectionOptions, type ConnectionOptions, type ResolvedConnectionOptions } from './options';
import { foreignQueueHost, queueKey, regionSqsHosts, type EndpointRouting } from './queueHost';

/**
 * One SQS client shared by publishers, consumers and topology helpers, plus a cache of
 * queue-name → URL lookups. The client it creates sends over HTTP agents of its own, which keep
 * 50 sockets per host for the requests other than long polls however many consumers poll
 * (LongPolls); a given client's agent is the user's. SQS is request/response over HTTP, so there is no session to
 * reconnect: a failed request is retried by the SDK (`maxAttempts`) and then reported.
 * connect() checks the endpoint answers; connect() and close() are safe to call twice. Every
 * request goes through request(), which ends it at its deadline.
 */
export class SqsConnection {
  readonly options: ResolvedConnectionOptions;
  private sqs: SQSClient | null = null;
  private connecting: Promise<void> | null = null;
  private closed = false;
  private readonly urls = new Map<string, Promise<string>>();
  private readonly credentials = new CredentialWatch();
  /** Aborted by close(): ends the requests the connection makes for all its callers (queueUrl). */
  private readonly lifetime = new AbortController();
  /**
   * Where the client sends requests (routingOf), read from its config: kept once known; a lookup
   * that failed or that a caller abandoned at its deadline is dropped (asked again next time).
   */
  private routing: Promise<EndpointRouting> | null = null;
  /** Queue URLs (queueKey) the endpoint answered for a name or a queue it created: its own. */
  private readonly answeredUrls = new Set<string>();
  /** The agents of the client this connection creates (none with a given client). */
  private readonly agents: OwnAgents | null;
  private readonly polls: LongPolls;

  constructor(options: ConnectionOptions = {}) {
    this.options = resolveConnectionOptions(options);
    this.agents = this.options.client ? null : ownAgents();
    this.polls = new LongPolls(this.agents, this.options.client, this.options.logger);
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

  /**
   * Sends one request, `send(client, signal)`, and waits for it until `signal` (its deadline)
   * aborts: also while the SDK waits for credentials, where it does not look at the signal. A
   * request that may have been waiting for a credential provider then rejects naming the provider
   * (credentialsTimeout); the provider call shared by the requests is abandoned (and asked again by
   * the next request) only when no other request waits for it (CredentialWatch). Else it rejects
   * as the SDK's own abort does (abandonedError).
   */
  request<T>(send: (client: SQSClient, signal: AbortSignal) => Promise<T>, signal: AbortSignal): Promise<T> {
    const client = this.client;
    if (signal.aborted) return Promise.reject(signal.reason);
    const ticket = this.credentials.enter();
    let work: Promise<T>;
    try {
      work = withRequestSignal(signal, () => send(client, signal));
    } catch (error) {
      this.credentials.leave(ticket);
      return Promise.reject(error);
    }
    const answered = work.finally(() => this.credentials.leave(ticket));
    return untilDeadline(answered, signal, (reason) => {
      const error = credentialsTimeout(reason);
      return this.credentials.abandon(ticket, error) ? error : abandonedError(reason);
    });
  }

  /**
   * request() for a long poll of the queue at `queueUrl` (ReceiveMessage with WaitTimeSeconds),
   * which SQS may hold for its whole wait: on the client this connection created, its agents have
   * a socket more while it runs, so polls never take the sockets of the other requests (LongPolls).
   */
  async longPoll<T>(
    queueUrl: string,
    send: (client: SQSClient, signal: AbortSignal) => Promise<T>,
    signal: AbortSignal,
  ): Promise<T> {
    const release = this.polls.hold(queueUrl);
    try {
      return await this.request(send, signal);
    } finally {
      release();
    }
  }

  /**
   * Checks the endpoint answers a ListQueues (within setupTimeoutMs); resolves at once when
   * already connected. FERRY_PERMANENT_FAILURE when SQS refused the credentials,
   * FERRY_TRANSPORT_ERROR (retriable) otherwise (requestError).
   */
  async connect(): Promise<void> {
    if (this.closed) throw closedError('SQS connection');
    this.connecting ??= this.request(
      (sqs, abortSignal) => sqs.send(new ListQueuesCommand({ MaxResults: 1 }), { abortSignal }),
      requestDeadline(this.options.setupTimeoutMs),
    )
      .then(() => undefined)
      .catch((error: unknown) => {
        this.connecting = null;
        throw requestError(
          `ListQueues at ${this.options.client ? 'the given SQSClient' : (this.options.endpoint ?? `region ${this.options.region}`)}`,
          error,
        );
      });
    return this.connecting;
  }

  /**
   * The URL of a queue given by URL or name. Names are resolved with GetQueueUrl once and
   * cached; a failed lookup is not cached, so a queue created later is found. The lookup is
   * shared by every caller asking for the name meanwhile, so it has a deadline of its own
   * (setupTimeoutMs, or close()), never a caller's: each caller stops waiting at its own `signal`
   * (abandonedError, or credentialsTimeout while the credential provider has not answered),
   * and one caller giving up fails no other.
   */
  async queueUrl(nameOrUrl: string, signal?: AbortSignal): Promise<string> {
    if (/^https?:\/\//.test(nameOrUrl)) return nameOrUrl;
    let url = this.urls.get(nameOrUrl);
    if (!url) {
      url = this.request(
        (sqs, abortSignal) => sqs.send(new GetQueueUrlCommand({ QueueName: nameOrUrl }), { abortSignal }),
        requestDeadline(this.options.setupTimeoutMs, this.lifetime.signal),
      ).then((output) => {
        if (!output.QueueUrl) throw new Error(`GetQueueUrl returned no URL for ${nameOrUrl}`);
        this.answeredQueueUrl(output.QueueUrl);
        return output.QueueUrl;
      });
      this.urls.set(nameOrUrl, url);
      url.catch(() => this.urls.delete(nameOrUrl));
    }
    if (!signal) return url;
    return untilDeadline(url, signal, (reason) =>
      this.credentials.waiting ? credentialsTimeout(reason) : abandonedError(reason),
    );
  }

  /**
   * A queue URL the endpoint answered (GetQueueUrl of a name the application looked up, CreateQueue
   * of declareQueue): that queue is the endpoint's, even on a host that is not the endpoint's own
   * name (ElasticMQ asked as `localhost` answers with its node address). Only that URL: an answer
   * naming some host makes no other queue URL on it the endpoint's.
   */
  answeredQueueUrl(url: string): void {
    const key = queueKey(url);
    if (key !== null) this.answeredUrls.add(key);
  }

  /**
   * Why requests for the queue at `queueUrl` do not go to this connection's endpoint (a text naming
   * the host, for an error), or null when they do or may (README, "Queue hosts"; foreignQueueHost):
   * a failure to answer there is then that destination's, not an SQS outage. With an endpoint given
   * in code every request goes to it: null, no provider asked. Else the routing is looked up (the
   * client's region and configured endpoint) within `signal` (the publish's deadline): a lookup
   * that fails or does not answer by then is null (the failure counts as the endpoint's: an
   * outage, never charged) and is asked again next time.
   */
  async foreignHost(queueUrl: string, signal: AbortSignal): Promise<string | null> {
    if (this.fixedEndpoint() || signal.aborted) return null;
    let lookup = this.routing;
    if (lookup === null) {
      const started = this.routingOf();
      lookup = started;
      this.routing = started;
      started.catch(() => {
        if (this.routing === started) this.routing = null;
      });
    }
    try {
      const routing = await untilDeadline(lookup, signal, abandonedError);
      return foreignQueueHost(queueUrl, routing, this.answeredUrls);
    } catch {
      if (this.routing === lookup) this.routing = null;
      return null;
    }
  }

  /**
   * Whether the SDK sends every request to an endpoint given in code, whatever host a queue URL
   * names: the `endpoint` option, or a given client with an endpoint or `useQueueUrlAsEndpoint:
   * false` in its config. Read from the config as it is, without asking a provider.
   */
  private fixedEndpoint(): boolean {
    const client = this.options.client;
    if (client === undefined) return this.options.endpoint !== undefined;
    const config = client.config as unknown as RoutingConfig;
    return config.endpoint !== undefined || config.useQueueUrlAsEndpoint === false;
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

  /**
   * The region requests are signed for: the given client's (its config), else the region option;
   * null when the given client has none it can name (its every request fails then anyway).
   */
  async signingRegion(): Promise<string | null> {
    const client = this.options.client;
    if (client === undefined) return this.options.region;
    const given: unknown = client.config.region;
    try {
      const region: unknown = typeof given === 'function' ? await (given as () => Promise<unknown>)() : given;
      return typeof region === 'string' && region.length > 0 ? region : null;
    } catch {
      return null;
    }
  }

  /**
   * Where the client sends requests when no endpoint is given in code, read from its config as the
   * SDK reads it (EndpointRouting): the client this connection created and a given one alike.
   * Rejects when the region is unknown (a provider that failed, a client without one).
   */
  private async routingOf(): Promise<EndpointRouting> {
    const config = this.client.config as unknown as RoutingConfig;
    const [region, configured] = await Promise.all([
      this.signingRegion(),
      config.ignoreConfiguredEndpointUrls === true || typeof config.serviceConfiguredEndpoint !== 'function'
        ? undefined
        : config.serviceConfiguredEndpoint(),
    ]);
    if (region === null) throw new Error('the region of the SQS client is unknown');
    const lower = region.toLowerCase();
    return {
      configured: typeof configured === 'string' && configured !== '' ? configured : null,
      region: lower,
      regionHosts: regionSqsHosts(config.endpointProvider, lower),
    };
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Destroys the client this connection created (a client passed in is left open). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.lifetime.abort(closedError('SQS connection'));
    if (this.sqs && !this.options.client) this.sqs.destroy();
    this.agents?.http.destroy();
    this.agents?.https.destroy();
    this.sqs = null;
    this.urls.clear();
  }

  private createClient(): SQSClient {
    const { endpoint, region, credentials, maxAttempts } = this.options;
    // A copy of static credentials: the SDK writes into the object it signs with ($source),
    // which would make the caller's object an unknown key to the next connection given it.
    const given =
      typeof credentials === 'function'
        ? this.credentials.watch(credentials)
        : credentials && { ...credentials };
    return new SQSClient({
      region,
      maxAttempts,
      // Its waits between attempts end with the request's signal: none outlives its owner's close().
      retryStrategy: abortableRetries(maxAttempts),
      requestHandler: { httpAgent: this.agents!.http, httpsAgent: this.agents!.https },
      ...(endpoint !== undefined ? { endpoint } : {}),
      ...(given !== undefined ? { credentials: given } : {}),
    });
  }
}

/** The SQSClient config keys that decide where a request goes (the SDK's resolved config). */
interface RoutingConfig {
  /** Set when the client was given an endpoint: every request goes there. */
  readonly endpoint?: unknown;
  readonly useQueueUrlAsEndpoint?: boolean;
  readonly ignoreConfiguredEndpointUrls?: boolean;
  /** The endpoint configured outside the code (environment, shared config file), if any. */
  readonly serviceConfiguredEndpoint?: () => Promise<string | undefined>;
  /** The SDK's endpoint resolution (region, dual-stack, FIPS → URL): regionSqsHosts. */
  readonly endpointProvider?: unknown;
}
