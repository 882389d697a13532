import { get, post } from '../../api/client'
import { downloadAttachment, paperBody, type PaperSource } from '../../api/paper'
import type { CheckCost, CheckPage, CheckRecord, ReportDetail, VerifiedReport, WordCount } from './types'

const BASE = 'api/base/check_api'

export type CheckSource = PaperSource

const body = paperBody

export const wordCount = (source: CheckSource) => post<WordCount>(`${BASE}/word_count`, { ...body(source), silent: true })

export const checkInit = (source: CheckSource) => post<CheckRecord>(`${BASE}/check_init`, { ...body(source), timeout: 120000 })

export const checkCost = (id: number, excludeBibliography = true) =>
  post<CheckCost>(`${BASE}/check_cost`, { data: { id, exclude_bibliography: excludeBibliography } })

/** The official report always counts matches of 13 characters or more (printed on it); longer
 * minimums are report options of the on-screen view. */
/** What `checkSubmit` sends (kept with a scan-to-pay order too). */
export const checkSubmission = (id: number, excludeBibliography: boolean, addToPrivateLibrary: boolean) => ({
  path: `/${BASE}/check_submit`,
  body: { id, exclude_bibliography: excludeBibliography, add_to_private_library: addToPrivateLibrary },
})

export const checkSubmit = (id: number, excludeBibliography: boolean, addToPrivateLibrary: boolean, headers?: Record<string, string>) =>
  post<CheckRecord>(`${BASE}/check_submit`, { data: checkSubmission(id, excludeBibliography, addToPrivateLibrary).body, headers })

export const queryList = (page: number, size: number) =>
  post<CheckPage>(`${BASE}/query_list`, { data: { page, size }, silent: true })

export const loadById = (id: number) => post<CheckRecord>(`${BASE}/load_by_id`, { data: { id } })

/** The record behind a report's own page, which shows any error itself. */
export const checkRecord = (id: number) => post<CheckRecord>(`${BASE}/load_by_id`, { data: { id }, silent: true })

/** CNKI's report options: the figures are recomputed without what they leave out. */
export interface ReportOptions {
  excludeQuoted: boolean
  excludeOwn: boolean
  minChars: number
  /** Count common phrases (常用表述) in the ratios; by default they are listed, not counted. */
  countCommon: boolean
}

/** The report options as query parameters of report_paragraphs and download_report. */
const optionParams = (o?: ReportOptions) => ({
  exclude_quoted: o?.excludeQuoted ?? false,
  exclude_own: o?.excludeOwn ?? false,
  min_chars: o?.minChars ?? 0,
  count_common: o?.countCommon ?? false,
})

export const reportParagraphs = (id: number, o?: ReportOptions) =>
  get<ReportDetail>(`${BASE}/report_paragraphs`, {
    params: { id, ...optionParams(o) },
    silent: true,
  })

export const verifyReport = (code: string) => get<VerifiedReport>(`${BASE}/verify_report`, { params: { code }, silent: true })

export const updateTitle = (id: number, title: string) => post<boolean>(`${BASE}/update_title`, { data: { id, title } })

export const deleteCheck = (id: number) => post<boolean>(`${BASE}/delete`, { data: { id } })

/** Downloads the report (PDF or HTML) through the authenticated client and saves it. */
/** Without options the official report; with any option a 自定义视图 without verification code. */
export const downloadReport = (id: number, title: string, format: 'pdf' | 'html' = 'pdf', o?: ReportOptions) =>
  downloadAttachment(
    `${BASE}/download_report`,
    { id, format, ...optionParams(o) },
    `${title || '查重报告'}-查重报告${o && isCustomView(o) ? '-自定义视图' : ''}.${format}`,
  )

export const isCustomView = (o: ReportOptions) => o.excludeQuoted || o.excludeOwn || o.minChars > 0 || o.countCommon
