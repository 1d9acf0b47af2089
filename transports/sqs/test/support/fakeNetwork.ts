import { Readable } from 'node:stream';
import { SQSClient, type SQSClientConfig } from '@aws-sdk/client-sqs';

/**
 * A network for the SDK (its request handler) where no host accepts a connection, except that
 * `answers` gives SQS's answer (JSON protocol, HTTP 200) to the operations it names (`GetQueueUrl`
 * → its output): the rule of which host is the endpoint's is pure logic of the URLs, and AWS's
 * hosts are not reachable from a test. `hosts` records where each request went
 * (`host:port`, the port as the request really uses it), so a test shows where the SDK sent it.
 */
export class FakeNetwork {
  readonly hosts: string[] = [];

  constructor(private readonly answers: Readonly<Record<string, unknown>> = {}) {}

  /** An SQSClient over this network (one attempt per request, test credentials unless given). */
  client(config: Omit<SQSClientConfig, 'requestHandler' | 'maxAttempts'> = {}): SQSClient {
    const handler = {
      handle: async (request: {
        protocol: string;
        hostname: string;
        port?: number;
        headers: Record<string, string>;
      }) => {
        const port = request.port ?? (request.protocol === 'https:' ? 443 : 80);
        const host = `${request.hostname.includes(':') ? `[${request.hostname}]` : request.hostname}:${port}`;
        this.hosts.push(host);
        const operation = (request.headers['x-amz-target'] ?? '').replace(/^AmazonSQS\./, '');
        if (Object.prototype.hasOwnProperty.call(this.answers, operation)) {
          return {
            response: {
              statusCode: 200,
              headers: { 'content-type': 'application/x-amz-json-1.0' },
              body: Readable.from([Buffer.from(JSON.stringify(this.answers[operation]))]),
            },
          };
        }
        throw Object.assign(new Error(`connect ECONNREFUSED ${host}`), { code: 'ECONNREFUSED' });
      },
      updateHttpClientConfig: () => undefined,
      httpHandlerConfigs: () => ({}),
    };
    return new SQSClient({
      region: 'us-east-1',
      credentials: { accessKeyId: 'ferry', secretAccessKey: 'ferry' },
      ...config,
      maxAttempts: 1,
      requestHandler: handler as unknown as NonNullable<SQSClientConfig['requestHandler']>,
    });
  }
}

const ENDPOINT_ENV = [
  'AWS_ENDPOINT_URL_SQS',
  'AWS_ENDPOINT_URL',
  'AWS_IGNORE_CONFIGURED_ENDPOINT_URLS',
] as const;

/**
 * Registers hooks that clear the SDK's endpoint variables for each test (restored after it) and
 * silence the console warning the SDK writes for each request sent to a queue URL's own host.
 */
export function withoutConfiguredEndpoints(): void {
  const saved = new Map<string, string | undefined>();
  beforeEach(() => {
    for (const key of ENDPOINT_ENV) {
      saved.set(key, process.env[key]);
      delete process.env[key];
    }
    jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  });
  afterEach(() => {
    for (const key of ENDPOINT_ENV) {
      const value = saved.get(key);
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    jest.restoreAllMocks();
  });
}
