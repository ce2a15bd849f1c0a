import { ApiProperty } from '@nestjs/swagger';

/** The body of /health/live and /health/ready: `{ data: { status: 'ok' } }`. */
export class HealthView {
  @ApiProperty({ enum: ['ok'] })
  status!: 'ok';
}
