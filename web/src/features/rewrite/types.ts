// Shapes of paper_machine_api (see /api/docs/openapi.json).
import type { TaskStatus } from '../check/types'

export type Goal = 'similarity' | 'aigc' | 'both' | 'polish' | 'expand' | 'shorten' | 'academic'
/** Paper rewrites, paragraph rewriting (machine_cnki_*) and smart rewriting (machine_*). */
export type RewriteKind = 'rewrite' | 'rewrite_paragraph' | 'rewrite_smart'

/** A paragraph's current attempt as the model writes it. */
export interface LiveLine {
  index: number
  text: string
}
export type Strength = 'light' | 'medium' | 'strong'

export interface RewriteRecord {
  id: number
  kind: RewriteKind
  title: string
  fileName: string
  goal: Goal
  goalLabel: string
  strength: Strength
  frozen: string[]
  chars: number
  paragraphs: number
  sourceTask: number | null
  status: TaskStatus
  progress: number
  phase: string
  error: string | null
  chargedFen: number
  chargedUnits?: number
  refundedFen: number
  model: string | null
  accepted: number | null
  similarityBefore: number | null
  similarityAfter: number | null
  aiBefore: number | null
  aiAfter: number | null
  createdAt: number
  finishedAt: number | null
  live: LiveLine[]
}

export interface RewritePage {
  records: RewriteRecord[]
  total: number
  page: number
  size: number
}

/** One paragraph's judged rewrite, every figure measured by our engines. */
export interface ParagraphRewrite {
  original: string
  rewritten: string | null
  accepted: boolean
  reason: string | null
  similarity_before: number
  similarity_after: number | null
  ai_before: number | null
  ai_after: number | null
  meaning: number | null
  attempts: number
  strength: Strength
  model: string
  usage: { prompt_tokens: number; completion_tokens: number }
  /** Why the review does not trust `rewritten`; a doubted rewrite is never adopted by default. Absent or empty on old results. */
  doubts?: Doubt[]
  /** What the review measured of `rewritten`; null on old results and when the model gave nothing. */
  reading?: Reading | null
}

export type DoubtKind = 'terms' | 'fluency' | 'dropped' | 'reversed' | 'copied'

/** One thing the review doubts about a rewrite: 术语被改, 语句不通, 漏译句子, 意思相反 or 与原文雷同, and the words in question. */
export interface Doubt {
  kind: DoubtKind
  label: string
  detail: string
}

/** The review's reading of a rewrite (rewrite::review::Reading). */
export interface Reading {
  /** Key terms of the original (TF-IDF) and how many the rewrite keeps whole. */
  key_terms: number
  key_terms_kept: number
  /** English words, numbers, citations, formulas and kept terms, and how many are kept. */
  hard_items: number
  hard_items_kept: number
  /** Words of the rewrite found neither in the dictionary nor in the original. */
  non_words: string[]
  /** English words of the rewrite that the original did not have. */
  new_english?: string[]
  /** Mean surprisal per token (nats) of the original and the rewrite: lower reads more naturally. */
  surprisal_before: number | null
  surprisal_after: number | null
  /** Sentences of the original and how many have a counterpart in the rewrite. */
  sentences: number
  sentences_covered: number
  weakest_sentence: number | null
  /** 0–1 share of the rewrite in verbatim runs (at least 10 characters) of the original. */
  copied: number
}

/** paper_machine_api/engine: which model rewrites on this server. */
export interface RewriteEngine {
  source: 'endpoint' | 'local' | 'none'
  model: string | null
  unavailable: string | null
}

export interface ComparedLine {
  index: number
  text: string
  heading: number | null
  rewrite: ParagraphRewrite | null
  choice: boolean | null
  usesRewrite: boolean
}

/** machine_api/load_by_id: the record, and the paragraphs (judged once done). */
export interface MachineDetail {
  record: RewriteRecord
  lines: ComparedLine[]
  meaningMin: number
}

/** The whole paper, when it came from a finished check. */
export interface PaperEstimate {
  checkId: number
  /** That check's 总文字复制比. */
  ratioBefore: number
  /** Estimated with the rewrites now chosen (a new check gives the real figure). */
  ratioEstimated: number
}

export interface RewriteContent {
  record: RewriteRecord
  paper: PaperEstimate | null
  lines: ComparedLine[]
  promptVersion: string
  meaningMin: number
  elapsedMs: number
}

/** The payment state of a rewriting task: the same shape as a detection's. */
export type { OrderState as RewriteOrder } from '../aigc/types'

export const STRENGTHS: { value: Strength; label: string; hint: string }[] = [
  { value: 'light', label: '轻度', hint: '换词与微调语序，最贴近原文' },
  { value: 'medium', label: '中度', hint: '调整句式与语序，保持原意' },
  { value: 'strong', label: '深度', hint: '重组句子结构，改动最大' },
]

export const GOALS: { value: Goal; label: string }[] = [
  { value: 'similarity', label: '降重复率' },
  { value: 'aigc', label: '降 AIGC' },
  { value: 'both', label: '降重 + 降 AIGC' },
]

export const SMART_GOALS: { value: Goal; label: string; hint: string }[] = [
  { value: 'polish', label: '润色', hint: '修正语病、理顺表达，不改变意思与长度' },
  { value: 'expand', label: '扩写', hint: '补充论证与过渡，篇幅约增加一半' },
  { value: 'shorten', label: '缩写', hint: '保留要点与数据，删去冗余' },
  { value: 'academic', label: '学术化', hint: '改为规范的学术书面语' },
]
