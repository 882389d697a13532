import { get, post } from '../../api/client'
import { downloadAttachment, paperBody, type PaperSource } from '../../api/paper'
import type { CheckRecord, WordCount } from '../check/types'
import type { ComparedLine, Goal, MachineDetail, RewriteContent, RewriteEngine, RewriteOrder, RewritePage, RewriteRecord, Strength } from './types'

const BASE = 'api/base/paper_machine_api'

/** Which model rewrites here (an endpoint, the local small model, or none); no login needed. */
export const rewriteEngine = () => get<RewriteEngine>(`${BASE}/engine`, { silent: true })

export const rewriteWordCount = (source: PaperSource) => post<WordCount>(`${BASE}/word_count`, { ...paperBody(source), silent: true })

export const rewriteInit = (source: PaperSource) => post<RewriteRecord>(`${BASE}/machine_init`, { ...paperBody(source), timeout: 120000 })

/** A draft from the paragraphs a finished check flagged (with `aigcId`: those the detection flagged too). */
export const rewriteFromCheck = (id: number, goal: Goal = 'similarity', aigcId?: number) =>
  post<RewriteRecord>(`${BASE}/${goal === 'both' ? 'check_aigc_and_machine_submit' : 'check_machine_submit'}`, { data: { id, aigcId } })

export const rewriteFromDetection = (id: number) => post<RewriteRecord>(`${BASE}/check_aigc_machine_submit`, { data: { id } })

/** The price of a rewrite; with `line`, of running that one paragraph again. */
export const rewriteOrder = (id: number, line?: number) => post<RewriteOrder>('api/base/machine_api/check_order_id', { data: { id, index: line } })

/** What `rewriteSubmit` sends (kept with a scan-to-pay order too). */
export const rewriteSubmission = (id: number, goal: Goal, strength: Strength, frozen: string) => ({
  path: `/${BASE}/machine_submit`,
  body: { id, goal, strength, frozen },
})

export const rewriteSubmit = (id: number, goal: Goal, strength: Strength, frozen: string, headers?: Record<string, string>) =>
  post<RewriteRecord>(`${BASE}/machine_submit`, { data: rewriteSubmission(id, goal, strength, frozen).body, headers })

/** Runs an ended rewrite again: every paragraph, or `line` alone. */
export const rewriteReload = (id: number, line?: number, headers?: Record<string, string>) => post<RewriteRecord>(`${BASE}/reload`, { data: { id, index: line }, headers })

/** Which menu's records: 降重 (similarity) or 降AIGC / AI率降低 (aigc); both kinds when absent. */
export type RecordGoal = 'similarity' | 'aigc'

export const rewriteList = (page: number, size: number, goal?: RecordGoal) =>
  post<RewritePage>(`${BASE}/query_list`, { data: { page, size, goal }, silent: true })

export const rewriteLoad = (id: number) => post<RewriteRecord>(`${BASE}/load_by_id`, { data: { id }, silent: true })

export const rewriteContent = (id: number) => post<RewriteContent>(`${BASE}/query_content_list`, { data: { id } })

export const rewriteChoose = (id: number, index: number, accepted: boolean | null) =>
  post<ComparedLine>(`${BASE}/choose`, { data: { id, index, accepted: accepted ?? undefined } })

export const rewriteSubmitCheck = (id: number) => post<CheckRecord>(`${BASE}/submit_check`, { data: { id } })

export const rewriteDelete = (id: number) => post<boolean>(`${BASE}/delete`, { data: { id } })

export const rewriteDownload = (id: number, title: string) =>
  downloadAttachment(`${BASE}/download`, { id }, `${title || '论文'}（改写稿）.docx`, 'post')

// machine_api: paragraph rewriting (cnki) and smart rewriting of pasted text.
const MACHINE = 'api/base/machine_api'
export type PasteKind = 'cnki' | 'smart'

export const machineWordCount = (text: string) => post<WordCount>(`${MACHINE}/word_count`, { data: { text }, silent: true })

export const machineInit = (kind: PasteKind, text: string, goal: Goal, strength: Strength, frozen: string) =>
  post<RewriteRecord>(`${MACHINE}/${kind === 'cnki' ? 'machine_cnki_init' : 'machine_init'}`, { data: { text, goal, strength, frozen } })

export const machineSubmit = (kind: PasteKind, id: number, headers?: Record<string, string>) =>
  post<RewriteRecord>(`${MACHINE}/${kind === 'cnki' ? 'machine_cnki_submit' : 'machine_submit'}`, { data: { id }, headers })

export const machineList = (kind: PasteKind, page: number, size: number) =>
  post<RewritePage>(`${MACHINE}/query_list`, { data: { type: kind, page, size }, silent: true })

export const machineLoad = (id: number) => post<MachineDetail>(`${MACHINE}/load_by_id`, { data: { id }, silent: true })

export const machineReport = (id: number, title: string) => downloadAttachment(`${MACHINE}/download_report`, { id }, `${title || '改写'}（改写报告）.docx`)
