import { BadRequestException, Controller, Param, Post, UseGuards } from '@nestjs/common';
import { Audited } from '@audit-trail/client/nestjs';
import { DemoAuthGuard } from './demo-auth.guard';

/** The application's own routes; each marked one records an audit event when it succeeds. */
@Controller('invoices')
@UseGuards(DemoAuthGuard)
export class InvoicesController {
  @Post(':id/approve')
  @Audited('invoice.approve', {
    chain: 'billing',
    resource: (request) => `invoice:${request.params?.id}`,
    context: (_request, result) => ({ status: (result as { status: string }).status }),
  })
  approve(@Param('id') id: string): { id: string; status: string } {
    return { id, status: 'approved' };
  }

  /** Fails: nothing is recorded for a request that does not succeed. */
  @Post(':id/reject')
  @Audited('invoice.reject', { chain: 'billing', resource: (request) => `invoice:${request.params?.id}` })
  reject(@Param('id') id: string): never {
    throw new BadRequestException(`invoice ${id} cannot be rejected`);
  }
}
