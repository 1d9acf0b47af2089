import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fake of the SQS wire for the one answer ElasticMQ cannot give: it does not check
 * credentials, so it never refuses a request. This server answers every request as SQS answers
 * a request signed with an access key it does not know: HTTP 403, the JSON protocol's error
 * body and the query-compatible error code header (`InvalidClientTokenId` by default).
 */
export class RefusingSqs {
  requests = 0;
  private constructor(
    private readonly server: Server,
    readonly endpoint: string,
  ) {}

  static async start(code = 'InvalidClientTokenId'): Promise<RefusingSqs> {
    let fake: RefusingSqs | null = null;
    const server = createServer((request, response) => {
      if (fake) fake.requests += 1;
      request.resume();
      request.on('end', () => {
        response.writeHead(403, {
          'content-type': 'application/x-amz-json-1.0',
          'x-amzn-requestid': '00000000-0000-0000-0000-000000000000',
          'x-amzn-query-error': `${code};Sender`,
        });
        response.end(
          JSON.stringify({
            __type: `com.amazon.coral.service#${code}`,
            message: 'The security token included in the request is invalid.',
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    fake = new RefusingSqs(server, `http://127.0.0.1:${port}`);
    return fake;
  }

  /** A queue URL on this endpoint. */
  queueUrl(name: string): string {
    return `${this.endpoint}/000000000000/${name}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
