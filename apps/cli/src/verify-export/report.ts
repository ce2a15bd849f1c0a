import { printableLines } from '../io';
import { ChainSummary, ExportReport, Finding, formatRanges } from './verify-export';

/** Findings listed in full up to this many per kind; the rest are counted. */
export const MAX_LISTED_FINDINGS = 100;

/**
 * A plain-text report for people: what was checked, what failed, and the verdict last. Every line
 * is made printable: names and ids come from the file and may hold control characters.
 */
export function formatReport(source: string, report: ExportReport): string {
  const lines: string[] = [];
  lines.push(
    `Export ${source}: ${report.events} event(s) in ${report.chains.length} chain(s)${report.internalOnly ? ' (--internal-only: no checkpoint, no signature checked)' : ''}`,
  );
  for (const c of report.chains) lines.push(chainLine(c, report.internalOnly));
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
  return printableLines(lines);
}

function chainLine(c: ChainSummary, internalOnly: boolean): string {
  const checked = `${c.hashesRecomputed} hash(es) recomputed, ${c.linksChecked} link(s) checked`;
  const signed = internalOnly
    ? ''
    : `; ${c.confirmedSize > 0 ? `confirmed by a signed checkpoint: 1–${c.confirmedSize}` : 'confirmed: none'}` +
      (c.unconfirmed.length > 0 ? `; NOT CONFIRMED: ${formatRanges(c.unconfirmed)}` : '');
  return `  chain ${c.chainId} '${c.name}': ${c.events} event(s), positions ${formatRanges(c.runs)}; ${checked}${signed}`;
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
      return 'RESULT: VERIFIED: every event is covered by a checkpoint signed with the given key whose Merkle root the events reproduce, and every hash and link checked out.';
    case 'consistent':
      return 'RESULT: CONSISTENT: every hash, link, position and timestamp agrees with the rest of the file. No signature was checked (--internal-only): this does not show that the service wrote these events.';
    case 'tampered':
      return 'RESULT: TAMPERING FOUND.';
    case 'unconfirmed':
      return 'RESULT: NOT CONFIRMED: no contradiction found, but what is listed above is not confirmed by a signed checkpoint.';
  }
}
