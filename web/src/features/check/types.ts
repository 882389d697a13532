import type { PackagePayment, PaysWith } from '../order/paysWith'
// Shapes of check_api (see /api/docs/openapi.json).

export type TaskStatus = 'pending' | 'queued' | 'running' | 'done' | 'failed' | 'cancelled'

export interface CheckRecord {
  id: number
  title: string
  author: string
  fileName: string
  chars: number
  status: TaskStatus
  progress: number
  phase: string
  ratioTotal: number | null
  ratioExcludingQuotes: number | null
  ratioExcludingOwn: number | null
  ratioMaxSingleSource: number | null
  copiedChars: number | null
  error: string | null
  chargedFen: number
  chargedFreeChecks: number
  createdAt: number
  finishedAt: number | null
}

export interface WordCount {
  chars: number
  rule: string
  format: string
}

export interface CheckCost {
  id: number
  chars: number
  rule: string
  pricePerThousandFen: number
  priceFen: number
  paysWith: PaysWith
  /** The user's packages of this kind, when any is held. */
  package?: PackagePayment | null
  freeChecks: number
  balanceFen: number
  /** The longest paper a free check pays for (null where free checks do not apply). */
  freeCheckMaxChars: number | null
}

export interface CheckPage {
  records: CheckRecord[]
  total: number
  page: number
  size: number
}

/** common: 常用表述, wording many library documents share (counted only when the reader asks);
 * translated: 疑似翻译, a translation of a library sentence in another language (never counted). */
export type SpanClass = 'copy' | 'light_edit' | 'quoted' | 'paraphrase' | 'common' | 'translated'

export interface ReportSpan {
  start: number
  end: number
  source_id: number
  source_start: number
  source_end: number
  class: SpanClass
  chars: number
  /** The source's passage, for 全文对照. */
  source_text: string
  /** For a common phrase: how many library documents use it (the span names one of them). */
  docs?: number
}

export interface ReportSource {
  id: number
  title: string
  author: string
  year: number | null
  scope: 'public' | 'private' | 'own_published'
  copied_chars: number
  ratio: number
  spans: number[]
}

export interface PartRatio {
  title: string
  start: number
  end: number
  total_chars: number
  copied_chars: number
  ratio: number
}

export interface Report {
  total_chars: number
  excluded_chars: number
  copied_chars: number
  ratio_total: number
  ratio_excluding_quotes: number
  ratio_excluding_own: number
  ratio_max_single_source: number
  max_single_source: number | null
  paraphrase_chars: number
  /** Counted characters in suspected translations (never part of the ratios). */
  translated_chars: number
  /** Counted characters in common phrases that no counted span covers. */
  common_chars: number
  /** Whether this view counts common phrases in the ratios (report option, off by default). */
  common_counted: boolean
  sources: ReportSource[]
  spans: ReportSpan[]
  chapters: PartRatio[]
  paragraphs: PartRatio[]
}

export interface ReportDetail {
  record: CheckRecord
  text: string
  report: Report
  reportNumber: string
  verifyCode: string
  privateLibrary: boolean
  /** Report options changed the figures: a 自定义视图, not the official report. */
  refigured: boolean
  /** The settings the official report was made under, one line each. */
  settings: string[]
  /** The title when the check finished (on the official report and /verify). */
  officialTitle: string
}

/** What /verify shows: authenticity and headline figures as printed, never the text. */
export interface VerifiedReport {
  /** check (文字复制比) or aigc (AIGC检测). */
  kind: 'check' | 'aigc'
  reportNumber: string
  title: string
  author: string
  checkedAt: number
  chars: number
  ratioTotal: number | null
  ratioExcludingQuotes: number | null
  ratioExcludingOwn: number | null
  ratioMaxSingleSource: number | null
  copiedChars: number | null
  sourceCount: number | null
  aiRate: number | null
  settings: string[]
  /** When the owner deleted the record; the report stays genuine. */
  deletedAt: number | null
}
