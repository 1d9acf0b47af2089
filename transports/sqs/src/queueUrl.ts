/** Whether a queue URL or name denotes a FIFO queue (SQS requires the `.fifo` suffix). */
export function isFifoQueue(nameOrUrl: string): boolean {
  return nameOrUrl.endsWith('.fifo');
}

/** Whether `value` is a queue URL (http:// or https://) rather than a queue name. */
export function isQueueUrl(value: string): boolean {
  return /^https?:\/\//.test(value);
}

/** An AWS queue URL's host: `sqs.<region>.amazonaws.com` (also `sqs-fips.`, `.com.cn`). */
const AWS_QUEUE_HOST = /^https?:\/\/sqs(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?(?::\d+)?\//i;

/** The region of an AWS queue URL; null for any other URL (ElasticMQ, LocalStack, a VPC endpoint). */
export function awsQueueRegion(url: string): string | null {
  return AWS_QUEUE_HOST.exec(url)?.[1]?.toLowerCase() ?? null;
}

/** SQS's queue name rule: 1 to 80 letters, digits, `-` and `_`, a FIFO queue's `.fifo` counted within the 80. */
export const QUEUE_NAME = /^[A-Za-z0-9_-]{1,80}$/;
export const MAX_QUEUE_NAME = 80;

/** A queue ARN: `arn:<partition>:sqs:<region>:<account>:<name>`. */
const QUEUE_ARN = /^arn:(aws[a-z-]*):sqs:([a-z0-9-]+):(\d{12}):([A-Za-z0-9_-]{1,80}(?:\.fifo)?)$/;

/**
 * Why `value`, given where ferry takes a queue's URL or name (a publisher's destination, route or
 * defaultDestination, a consumer's queueUrl), names no queue, or null: a URL (http:// or
 * https://) or a name SQS takes (QUEUE_NAME, `.fifo` counted) does. A queue ARN is not resolved:
 * the connection's client speaks to one region and account, where a queue of that name may be
 * another; the fault names the ARN's URL on AWS. Anything else (a space, `account/name`) would be
 * looked up with GetQueueUrl for ever, never found (review 105).
 */
export function queueReferenceFault(value: string): string | null {
  if (isQueueUrl(value)) return null;
  const given = JSON.stringify(value.slice(0, 200));
  const name = isFifoQueue(value) ? value.slice(0, -'.fifo'.length) : value;
  if (QUEUE_NAME.test(name) && value.length <= MAX_QUEUE_NAME) return null;
  const arn = QUEUE_ARN.exec(value);
  if (arn) {
    const [, partition, region, account, queue] = arn;
    const domain = partition === 'aws-cn' ? 'amazonaws.com.cn' : 'amazonaws.com';
    return `${given} is a queue ARN: give its URL, https://sqs.${region}.${domain}/${account}/${queue} (or its name, for a queue of the connection's region and account)`;
  }
  return `${given} is no queue URL or name: SQS takes 1 to ${MAX_QUEUE_NAME} letters, digits, - and _ as a queue name (.fifo counted), or give the queue's URL (http:// or https://)`;
}
