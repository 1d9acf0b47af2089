/**
 * The credentials the AWS SDK takes, as the credential providers and STS answer them, pass the
 * option checks unchanged: static ones with `expiration` (and the identity's other fields, each
 * kept in the options' snapshot, review 142), and a provider function. Unknown keys in a static object are still refused, its values never shown.
 */
import { isFerryError } from '@ferry/core';
import { SqsConnection, resolveConnectionOptions } from '@ferry/sqs';
import { SQS_ENDPOINT } from './support/sqs';

const identity = { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'not-shown', sessionToken: 'tok' };

describe('SQS connection credentials', () => {
  it('takes static credentials with an expiration, a credential scope and an account id', () => {
    const credentials = { ...identity, expiration: new Date(), credentialScope: 'eu', accountId: '123' };
    expect(resolveConnectionOptions({ credentials }).credentials).toStrictEqual(credentials);
  });

  it('takes a credential provider function, handed to the SDK as given', () => {
    const provider = async () => identity;
    expect(resolveConnectionOptions({ credentials: provider }).credentials).toBe(provider);
  });

  it('refuses an unknown key of static credentials without showing a value', () => {
    let error: unknown;
    try {
      resolveConnectionOptions({ credentials: { ...identity, secretKey: 'also-not-shown' } as never });
    } catch (thrown) {
      error = thrown;
    }
    expect(isFerryError(error, 'FERRY_CONFIG_INVALID')).toBe(true);
    expect((error as Error).message).toContain('credentials.secretKey');
    expect((error as Error).message).not.toMatch(/not-shown|AKIAEXAMPLE/);
  });

  it('one static credentials object serves two connections, one after the other (the SDK writes into the object it signs with)', async () => {
    const credentials = { accessKeyId: 'ferry', secretAccessKey: 'ferry' };
    const first = new SqsConnection({ endpoint: SQS_ENDPOINT, region: 'us-east-1', credentials });
    await first.connect();
    await first.close();
    const second = new SqsConnection({ endpoint: SQS_ENDPOINT, region: 'us-east-1', credentials });
    await second.connect();
    await second.close();
    expect(Object.keys(credentials)).toEqual(['accessKeyId', 'secretAccessKey']);
  });
});
