import { post } from '../../api/client'
import { downloadAttachment, fetchAttachment, paperBody } from '../../api/paper'
import type { OtherPackage, OtherView, Outline, PaperContent, PaperDetail, PaperPage } from './types'

const AI = 'api/base/ai_paper_info_api'
const INFO = 'api/base/paper_info_api'

export interface PaperForm {
  title: string
  field: string
  kind: 'thesis' | 'article'
  degree: string
  words: number
  keywords: string
  /** The user's own references, one GB/T 7714 line each. */
  references?: string
  /** The user's own outline (自拟大纲), one heading per line. */
  outline?: string
}

/** What a reference file gave: GB/T 7714 lines, and the entries that could not be read. */
export interface ReadReferences {
  format: string
  references: string[]
  skipped: string[]
  truncated: number
}

/** Reads a .bib/.ris/.enw/.txt/.docx/.pdf reference file into GB/T 7714 lines (nothing stored). */
export const paperReadReferences = (file: File) => post<ReadReferences>(`${AI}/read_references`, { ...paperBody({ file }), timeout: 60000 })

/** Reads an outline file (.docx/.txt/.pdf) into numbered heading lines (nothing stored). */
export const paperReadOutline = (file: File) =>
  post<{ text: string; chapters: number; sections: number }>(`${AI}/read_outline`, { ...paperBody({ file }), timeout: 60000 })

/** 毕业论文 through paper_submit, 学术论文 through paper_xueshu_submit (spec §7). */
export const paperSubmit = (form: PaperForm) =>
  post<PaperDetail>(`${INFO}/${form.kind === 'article' ? 'paper_xueshu_submit' : 'paper_submit'}`, { data: form })

/** Plans an uncommitted paper's outline again. */
export const paperReplan = (id: number) => post<PaperDetail>(`${AI}/generate_paper`, { data: { id } })

export const paperLoad = (id: number) => post<PaperDetail>(`${AI}/load_by_id`, { data: { id }, silent: true })

export const paperList = (page: number, size: number) => post<PaperPage>(`${AI}/query_list`, { data: { page, size }, silent: true })

/** Keeps the outline as edited so far (before it is committed). */
export const paperSaveOutline = (id: number, outline: Outline) => post<boolean>(`${AI}/update_outline`, { data: { id, outline }, silent: true })

export const paperCommit = (id: number, outline: Outline, headers?: Record<string, string>) => post<PaperDetail>(`${AI}/commit_paper`, { data: { id, outline }, headers })

/** What `paperCommit` sends (kept with a scan-to-pay order too). */
export const paperCommission = (id: number, outline: Outline) => ({ path: `/${AI}/commit_paper`, body: { id, outline } as Record<string, unknown> })

export const paperContent = (id: number) => post<PaperContent>(`${AI}/query_content_list`, { data: { id }, silent: true })

export const paperUpdateSection = (id: number, index: number, change: { text: string } | { version: number }) =>
  post<PaperContent>(`${AI}/update_content`, { data: { id, index, ...change } })

export const paperDeleteSection = (id: number, index: number) => post<PaperContent>(`${AI}/delete_content`, { data: { id, index } })

export const paperReloadSection = (id: number, index: number, instruction: string) =>
  post<{ id: number; index: number; status: string }>(`${AI}/reload`, { data: { id, index, instruction } })

export const paperDelete = (id: number) => post<boolean>(`${AI}/delete`, { data: { id } })

export interface CoverForm {
  school?: string
  major?: string
  name?: string
  studentNumber?: string
  supervisor?: string
  date?: string
  acknowledgements?: string
}

export const paperDownload = (id: number, title: string, cover: CoverForm) =>
  downloadAttachment(`${AI}/download`, { id, ...cover }, `${title || '论文'}.docx`, 'post')

/** The graduation package of a finished paper; with `other`, starts writing that document (free). */
export const paperPackage = (id: number, other?: OtherView['other']) =>
  post<OtherPackage>(`${INFO}/load_other_by_id`, { data: other ? { id, other } : { id }, silent: !other })

export const paperPackageDownload = (id: number, title: string, other: OtherView) =>
  downloadAttachment(`${AI}/download`, { id, other: other.other }, `${title || '论文'}-${other.label}.docx`, 'post')

/** The finished paper as a Word file, to hand to the check, the detection or a rewrite without saving it first. */
export async function paperAsFile(id: number, title: string) {
  const { data, fileName } = await fetchAttachment(`${AI}/download`, { id }, `${title || '论文'}.docx`, 'post')
  return new File([data], fileName, { type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' })
}

export interface PaperOption {
  id: string
  value: { group: 'kind' | 'degree'; name: string; enabled: boolean }
}

/** The paper kinds and degree levels this site offers (the operator may switch some off). */
export const paperOptions = () =>
  post<PaperOption[]>('api/base/ai_sys_config_api/f/load_all_by_entity', { data: { entity: 'paper_options' }, silent: true })
