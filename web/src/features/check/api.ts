import { get, http, post } from '../../api/client'
import type { CheckCost, CheckPage, CheckRecord, ReportDetail, WordCount } from './types'

const BASE = 'api/base/check_api'

export interface CheckSource {
  file?: File
  text?: string
  title?: string
  author?: string
}

function body(source: CheckSource) {
  if (!source.file) return { data: { text: source.text ?? '', title: source.title ?? '', author: source.author ?? '' } }
  const form = new FormData()
  form.append('file', source.file)
  form.append('title', source.title ?? '')
  form.append('author', source.author ?? '')
  return { data: form }
}

export const wordCount = (source: CheckSource) => post<WordCount>(`${BASE}/word_count`, { ...body(source), silent: true })

export const checkInit = (source: CheckSource) => post<CheckRecord>(`${BASE}/check_init`, { ...body(source), timeout: 120000 })

export const checkCost = (id: number) => post<CheckCost>(`${BASE}/check_cost`, { data: { id } })

export const checkSubmit = (id: number, excludeBibliography: boolean, minSpan: number, addToPrivateLibrary: boolean) =>
  post<CheckRecord>(`${BASE}/check_submit`, {
    data: { id, exclude_bibliography: excludeBibliography, min_span: minSpan, add_to_private_library: addToPrivateLibrary },
  })

export const queryList = (page: number, size: number) =>
  post<CheckPage>(`${BASE}/query_list`, { data: { page, size }, silent: true })

export const loadById = (id: number) => post<CheckRecord>(`${BASE}/load_by_id`, { data: { id } })

export const reportParagraphs = (id: number) => get<ReportDetail>(`${BASE}/report_paragraphs`, { params: { id } })

export const updateTitle = (id: number, title: string) => post<boolean>(`${BASE}/update_title`, { data: { id, title } })

export const deleteCheck = (id: number) => post<boolean>(`${BASE}/delete`, { data: { id } })

/** Downloads the HTML report through the authenticated client and saves it. */
export async function downloadReport(id: number, title: string) {
  const response = await http.get(`${BASE}/download_report`, { params: { id, format: 'html' }, responseType: 'blob' })
  const url = URL.createObjectURL(response.data as Blob)
  const a = document.createElement('a')
  a.href = url
  a.download = `${title || '查重报告'}-报告.html`
  a.click()
  URL.revokeObjectURL(url)
}
