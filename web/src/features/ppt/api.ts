import { post } from '../../api/client'
import { downloadAttachment } from '../../api/paper'
import type { DeckForm, DeckPreviews, PptDetail, PptPage, PptRecord, TemplateView } from './types'

const BASE = 'api/base/ai_ppt_info_api'

/** The form as the server takes it: multipart when a file or logo goes with it. */
export function formBody(form: DeckForm) {
  const fields: Record<string, string> = {
    title: form.title,
    source: form.source,
    outline: form.source === 'outline' ? form.outline : '',
    kind: form.kind,
    slides: String(form.slides),
    school: form.school,
    presenter: form.presenter,
    supervisor: form.supervisor,
    date: form.date,
  }
  if (form.id) fields.id = String(form.id)
  if (form.sourceId) fields.sourceId = String(form.sourceId)
  if (!form.file && !form.logo) return { data: fields }
  const data = new FormData()
  for (const [k, v] of Object.entries(fields)) data.append(k, v)
  if (form.file) data.append('file', form.file)
  if (form.logo) data.append('logo', form.logo)
  return { data }
}

export const pptSave = (form: DeckForm) => post<PptRecord>(`${BASE}/save_or_update`, { ...formBody(form), timeout: 120000 })

export const pptTemplates = () => post<TemplateView[]>(`${BASE}/get_template_list`, { silent: true })

export const pptLoad = (id: number) => post<PptDetail>(`${BASE}/load_by_id`, { data: { id }, silent: true })

export const pptSubmit = (id: number, template: string, headers?: Record<string, string>) =>
  post<PptRecord>(`${BASE}/submit_by_id`, { data: { id, template }, headers })

/** What `pptSubmit` sends (kept with a scan-to-pay order too). */
export const pptSubmission = (id: number, template: string) => ({ path: `/${BASE}/submit_by_id`, body: { id, template } })

export const pptChangeTemplate = (id: number, template: string) => post<PptRecord>(`${BASE}/change_template`, { data: { id, template } })

export const pptList = (page: number, size: number) => post<PptPage>(`${BASE}/query_list`, { data: { page, size }, silent: true })

export const pptDelete = (id: number) => post<boolean>(`${BASE}/delete`, { data: { id } })

export const pptDownload = (id: number, title: string, format: 'pptx' | 'pdf') =>
  downloadAttachment(`${BASE}/download`, { id, format }, `${title || '答辩PPT'}-答辩PPT.${format}`, 'post')

/** A finished deck's first slides as LibreOffice draws them (data URLs); may take a few seconds after a change of template. */
export const pptPreviewPictures = (id: number) =>
  post<DeckPreviews>(`${BASE}/preview_pictures`, { data: { id }, silent: true, timeout: 120000 })
