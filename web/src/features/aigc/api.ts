import { post } from '../../api/client'
import { downloadAttachment, paperBody, type PaperSource } from '../../api/paper'
import type { WordCount } from '../check/types'
import type { AigcPage, AigcParagraph, AigcRecord, AigcReport, OrderState } from './types'

const BASE = 'api/base/paper_aigc_api'

export const aigcWordCount = (source: PaperSource) => post<WordCount>(`${BASE}/word_count`, { ...paperBody(source), silent: true })

export const aigcInit = (source: PaperSource) => post<AigcRecord>(`${BASE}/machine_init`, { ...paperBody(source), timeout: 120000 })

export const aigcOrder = (id: number) => post<OrderState>(`${BASE}/check_order_id`, { data: { id } })

export const aigcSubmit = (id: number, headers?: Record<string, string>) => post<AigcRecord>(`${BASE}/submit_check`, { data: { id }, headers })

/** What `aigcSubmit` sends (kept with a scan-to-pay order too). */
export const aigcSubmission = (id: number) => ({ path: `/${BASE}/submit_check`, body: { id } })

export const aigcReload = (id: number, headers?: Record<string, string>) => post<AigcRecord>(`${BASE}/reload`, { data: { id }, headers })

export const aigcList = (page: number, size: number) => post<AigcPage>(`${BASE}/query_list`, { data: { page, size }, silent: true })

export const aigcLoad = (id: number) => post<AigcRecord>(`${BASE}/load_by_id`, { data: { id }, silent: true })

export const aigcReport = (id: number) => post<AigcReport>(`${BASE}/query_content_list`, { data: { id } })

export const aigcParagraph = (id: number, index: number) => post<AigcParagraph>(`${BASE}/load_content_by_id`, { data: { id, index } })

export const aigcDelete = (id: number) => post<boolean>(`${BASE}/delete`, { data: { id } })

export const aigcDownload = (id: number, title: string, format: 'pdf' | 'html' = 'pdf') =>
  downloadAttachment(`${BASE}/download_report`, { id, format }, `${title || 'AIGC检测'}-AIGC检测报告.${format}`, 'post')
