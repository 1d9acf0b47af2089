import { FerryConfigError, type PrismaClientLike } from '@ferry/core';

/** Checks that the provider behind `prisma` is a Prisma client (raw SQL + interactive transactions). */
export function asPrismaClient(value: unknown): PrismaClientLike {
  const client = value as Partial<PrismaClientLike> | null | undefined;
  if (
    typeof client?.$queryRawUnsafe !== 'function' ||
    typeof client.$executeRawUnsafe !== 'function' ||
    typeof client.$transaction !== 'function'
  ) {
    throw new FerryConfigError(
      'prisma',
      'the provider does not look like a Prisma client ($queryRawUnsafe, $executeRawUnsafe, $transaction)',
    );
  }
  return client as PrismaClientLike;
}
