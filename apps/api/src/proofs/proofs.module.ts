import { Module } from '@nestjs/common';
import { ProofsController } from './proofs.controller';
import { ProofsService } from './proofs.service';

/** Inclusion and consistency proofs from each chain's stored Merkle tree (docs/contract.md §10). */
@Module({
  controllers: [ProofsController],
  providers: [ProofsService],
})
export class ProofsModule {}
