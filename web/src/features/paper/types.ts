import type { PackagePayment, PaysWith } from '../order/paysWith'
// Shapes of ai_paper_info_api / paper_info_api (see /api/docs/openapi.json).
import type { TaskStatus } from '../check/types'

export type PaperState =
  | 'outline_generating'
  | 'outline_ready'
  | 'outline_failed'
  | 'writing'
  | 'done'
  | 'failed'
  | 'cancelled'

export interface PaperRecord {
  id: number
  title: string
  field: string
  kind: 'thesis' | 'article'
  degree: string
  words: number
  state: PaperState
  status: TaskStatus
  progress: number
  phase: string
  error: string | null
  chars: number
  sectionsTotal: number
  sectionsDone: number
  weakSections: number
  /** What stays charged (the price less any refund). */
  chargedFen: number
  /** Package uses this paper took instead of money. */
  chargedUnits?: number
  /** Given back because the paper came out shorter than 85 % of the length paid for. */
  refundedFen: number
  model: string
  createdAt: number
  updatedAt: number
}

export interface OutlineNode {
  title: string
  budget: number
  references?: number[]
  children: OutlineNode[]
}

export interface Outline {
  chapters: OutlineNode[]
}

export interface PaperDetail {
  record: PaperRecord
  outline: Outline | null
  offered: { libraryId: number; formatted: string; own: boolean }[]
  writing: { index: number; heading: string; text: string } | null
  notices: string[]
  price: { words: number; priceFen: number; paidFen: number; balanceFen: number; paysWith: PaysWith; package?: PackagePayment | null; tiers: { words: number; fen: number }[] }
  disclaimer: string
}

export interface SectionView {
  index: number
  heading: string
  level: number
  text: string
  chars: number
  weak: boolean
  cited: number[]
  /** Citation marks the engine placed where a sentence shares a record's wording. */
  placedCitations: number
  versions: number
}

export interface PaperContent {
  id: number
  title: string
  state: PaperState
  sections: SectionView[]
  headings: { number: string; title: string; level: number }[]
  abstractZh: string
  abstractEn: string
  keywords: string[]
  keywordsEn: string[]
  references: { number: number; libraryId: number; title: string; formatted: string; own: boolean }[]
  writing: { index: number; heading: string; text: string } | null
  reloads: { id: number; index: number; status: TaskStatus; error: string | null }[]
  chars: number
  disclaimer: string
}

export interface PaperPage {
  records: PaperRecord[]
  total: number
  page: number
  size: number
}

export const STATE_LABEL: Record<PaperState, { label: string; color: string }> = {
  outline_generating: { label: '大纲生成中', color: 'processing' },
  outline_ready: { label: '待确认大纲', color: 'gold' },
  outline_failed: { label: '大纲生成失败', color: 'red' },
  writing: { label: '写作中', color: 'processing' },
  done: { label: '已完成', color: 'green' },
  failed: { label: '写作失败（已退款）', color: 'red' },
  cancelled: { label: '已取消', color: 'default' },
}

export const isBusy = (s: PaperState) => s === 'outline_generating' || s === 'writing'

/** One document of the graduation package (paper_info_api/load_other_by_id). */
export interface OtherView {
  other: 'proposal' | 'task_book' | 'review'
  label: string
  status: 'none' | TaskStatus
  progress: number
  phase: string
  error: string | null
  parts: { heading: string; text: string; weak: boolean }[]
  references: string[]
  chars: number
}

export interface OtherPackage {
  paperId: number
  title: string
  documents: OtherView[]
  disclaimer: string
}
