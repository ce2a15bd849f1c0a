import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { Metrics } from '@app/common';

/** audit_db_pool_connections{state}: the pg pool's idle, used and waiting counts, read at each scrape. */
@Injectable()
export class DatabasePoolGauge implements OnApplicationBootstrap {
  constructor(
    private readonly dataSource: DataSource,
    private readonly metrics: Metrics,
  ) {}

  onApplicationBootstrap(): void {
    const pool = (this.dataSource.driver as unknown as { master?: Pool }).master;
    if (!pool) return;
    this.metrics.watchDbPool(() => ({
      idle: pool.idleCount,
      used: pool.totalCount - pool.idleCount,
      waiting: pool.waitingCount,
    }));
  }
}
