import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ChainEntity } from '@app/database';
import { ChainsController } from './chains.controller';
import { ChainsService } from './chains.service';

@Module({
  imports: [TypeOrmModule.forFeature([ChainEntity])],
  controllers: [ChainsController],
  providers: [ChainsService],
})
export class ChainsModule {}
