import { ExportReport, Finding } from './verify-export';

/** Findings listed in full up to this many per kind; the rest are counted. */
export const MAX_LISTED_FINDINGS = 100;

const ranges = (runs: [number, number][]): string => runs.map(([a, b]) => (a === b ? `${a}` : `${a}–${b}`)).join(', ');

/** A plain-text report for people: what was checked, what failed, and the verdict last. */
export function formatReport(source: string, report: ExportReport): string {
  const lines: string[] = [];
  lines.push(
    `Export ${source}: ${report.events} event(s) in ${report.chains.length} chain(s)${report.complete ? '' : ' (filtered: gaps between positions are not judged)'}`,
  );
  for (const c of report.chains) {
    lines.push(
      `  chain ${c.chainId} '${c.name}': ${c.events} event(s), positions ${ranges(c.runs)}; ${c.hashesRecomputed} hash(es) recomputed, ${c.linksChecked} link(s) checked`,
    );
  }
  for (const cp of report.checkpoints) {
    const what = cp.checkpoint
      ? `chain ${cp.checkpoint.chainId}, size ${cp.checkpoint.size}, signed by ${cp.signedBy.join(', ')}`
      : 'signature not accepted';
    lines.push(`Checkpoint ${cp.label} (${what}): ${cp.status.toUpperCase()}: ${cp.message}`);
  }
  listFindings(
    lines,
    'TAMPERING FOUND',
    report.findings.filter((f) => f.kind === 'tampered'),
  );
  listFindings(
    lines,
    'NOT CONFIRMED',
    report.findings.filter((f) => f.kind === 'unconfirmed'),
  );
  lines.push(verdict(report));
  return `${lines.join('\n')}\n`;
}

function listFindings(lines: string[], title: string, findings: Finding[]): void {
  if (findings.length === 0) return;
  lines.push(`${title} (${findings.length}):`);
  for (const f of findings.slice(0, MAX_LISTED_FINDINGS)) {
    const where = [f.chainId && `chain ${f.chainId}`, f.position !== null && `position ${f.position}`, f.eventId]
      .filter(Boolean)
      .join(' ');
    lines.push(`  - ${where ? `${where}: ` : ''}${f.message}`);
  }
  if (findings.length > MAX_LISTED_FINDINGS) lines.push(`  … and ${findings.length - MAX_LISTED_FINDINGS} more`);
}

function verdict(report: ExportReport): string {
  switch (report.outcome) {
    case 'verified':
      return 'RESULT: VERIFIED: every hash, link and checkpoint checked out.';
    case 'tampered':
      return 'RESULT: TAMPERING FOUND.';
    case 'unconfirmed':
      return 'RESULT: NOT VERIFIED: no contradiction found, but not everything could be confirmed (see above).';
  }
}
