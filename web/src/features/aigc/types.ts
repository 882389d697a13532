// Shapes of paper_aigc_api (see /api/docs/openapi.json).
import type { CheckCost, TaskStatus } from '../check/types'

export interface AigcRecord {
  id: number
  title: string
  author: string
  fileName: string
  chars: number
  status: TaskStatus
  progress: number
  phase: string
  /** AIGC 占比 in percent; null until done, or when the text was too short. */
  aiRate: number | null
  probability: number | null
  notice: string | null
  error: string | null
  chargedFen: number
  chargedUnits?: number
  createdAt: number
  finishedAt: number | null
}

export interface AigcPage {
  records: AigcRecord[]
  total: number
  page: number
  size: number
}

export type Band = 'high' | 'medium' | 'low'

export interface AigcParagraph {
  index: number
  start: number
  end: number
  chars: number
  probability: number
  band: Band
  bandLabel: string
  text: string
}

export interface AigcReport {
  record: AigcRecord
  reportNumber: string
  /** The code that confirms this report on /verify. */
  verifyCode: string
  /** The settings the report was made under, one line each. */
  settings: string[]
  text: string
  paragraphs: AigcParagraph[]
  highThreshold: number
  mediumThreshold: number
  bandRule: string
  model: string
  criterion: string
  calibration: string
  note: string
}

export interface OrderState {
  id: number
  status: TaskStatus
  paid: boolean
  chargedFen: number
  cost: CheckCost
}
