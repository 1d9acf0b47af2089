import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { Logger } from '@ferry/core';

/**
 * Sockets per host that a client the connection creates keeps for its requests other than long
 * polls: the AWS SDK's own default (`maxSockets` 50 of @smithy/node-http-handler's agents).
 */
export const REQUEST_SOCKETS = 50;

/** The HTTP agents of a client the connection creates (keep-alive, as the SDK's own). */
export interface OwnAgents {
  readonly http: HttpAgent;
  readonly https: HttpsAgent;
}

export function ownAgents(): OwnAgents {
  return {
    http: new HttpAgent({ keepAlive: true, maxSockets: REQUEST_SOCKETS }),
    https: new HttpsAgent({ keepAlive: true, maxSockets: REQUEST_SOCKETS }),
  };
}

/**
 * The long polls (ReceiveMessage with WaitTimeSeconds) in flight on one connection. A long poll
 * holds a socket for up to its wait, so on an agent of a fixed size enough consumers hold every
 * socket and each other request of the connection (a publish, a delete, a visibility renewal,
 * a dead-letter copy) waits for a poll to end (review 72). On the agents of a client the
 * connection created, each poll in flight adds a socket of its own (maxSockets = REQUEST_SOCKETS +
 * polls in flight, per host): the other requests keep REQUEST_SOCKETS whatever the number of
 * consumers. A given client's agent is the user's and is not resized: a warn log, once, when the
 * polls in flight reach its maxSockets (read where the client has the SDK's NodeHttpHandler).
 */
export class LongPolls {
  private inFlight = 0;
  private warned = false;

  constructor(
    private readonly own: OwnAgents | null,
    private readonly given: SQSClient | undefined,
    private readonly logger: Logger,
  ) {}

  /** One poll of the queue at `queueUrl` starts; the returned function ends it (safe twice). */
  hold(queueUrl: string): () => void {
    this.resize(+1);
    if (this.given) this.checkGiven(this.given, queueUrl);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.resize(-1);
    };
  }

  private resize(by: number): void {
    this.inFlight += by;
    if (!this.own) return;
    this.own.http.maxSockets = REQUEST_SOCKETS + this.inFlight;
    this.own.https.maxSockets = REQUEST_SOCKETS + this.inFlight;
  }

  private checkGiven(client: SQSClient, queueUrl: string): void {
    if (this.warned) return;
    const limit = agentLimit(client, queueUrl);
    if (limit === null || this.inFlight < limit) return;
    this.warned = true;
    this.logger.warn(
      { longPolls: this.inFlight, maxSockets: limit },
      `ferry.sqs: ${this.inFlight} long polls in flight on the given SQSClient hold every socket of its HTTP agent (maxSockets ${limit}): ` +
        `the connection's other requests (publishes, deletes, visibility renewals) wait for a poll to end; ` +
        `give the client an agent with more sockets than its consumers, or let the connection create its client (README, "One connection, many consumers")`,
    );
  }
}

/** The request handler config of the SDK's NodeHttpHandler, as far as it is read here. */
interface HandlerAgents {
  readonly config?: {
    readonly httpAgent?: { readonly maxSockets?: unknown };
    readonly httpsAgent?: { readonly maxSockets?: unknown };
  } | null;
}

/**
 * The maxSockets of the agent a given client sends a request for `queueUrl` through, or null where
 * it cannot be read (another request handler, its config not resolved yet, no limit).
 */
function agentLimit(client: SQSClient, queueUrl: string): number | null {
  const handler = client.config.requestHandler as unknown as HandlerAgents | undefined;
  const agents = handler?.config;
  const agent = queueUrl.startsWith('http://') ? agents?.httpAgent : agents?.httpsAgent;
  const limit = agent?.maxSockets;
  return typeof limit === 'number' && Number.isFinite(limit) ? limit : null;
}
