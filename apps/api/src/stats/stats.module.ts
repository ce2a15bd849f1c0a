import { Module } from '@nestjs/common';
import { ReadsModule } from '../reads/reads.module';
import { StatsController } from './stats.controller';
import { StatsService } from './stats.service';

@Module({
  imports: [ReadsModule],
  controllers: [StatsController],
  providers: [StatsService],
})
export class StatsModule {}
