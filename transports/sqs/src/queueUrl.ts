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
