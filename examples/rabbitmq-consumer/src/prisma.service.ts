import { Inject, Injectable, Module, type DynamicModule, type OnModuleDestroy } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../generated/prisma/client';

export const DATABASE_URL = Symbol('DATABASE_URL');

/** The application's Prisma client as a Nest provider. */
@Injectable()
export class PrismaService extends PrismaClient implements OnModuleDestroy {
  constructor(@Inject(DATABASE_URL) databaseUrl: string) {
    super({ adapter: new PrismaPg({ connectionString: databaseUrl }) });
  }

  /** Runs after the inbox drained: InboxModule imports this module (see @ferry/nestjs, "Shutdown order"). */
  async onModuleDestroy(): Promise<void> {
    await this.$disconnect();
  }
}

@Module({})
export class PrismaModule {
  static forRoot(databaseUrl: string): DynamicModule {
    return {
      module: PrismaModule,
      providers: [{ provide: DATABASE_URL, useValue: databaseUrl }, PrismaService],
      exports: [PrismaService],
    };
  }
}
