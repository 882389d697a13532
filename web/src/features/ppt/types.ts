import type { TaskStatus } from '../check/types'
import type { PackagePayment, PaysWith } from '../order/paysWith'

export type DeckKind = 'defence' | 'proposal' | 'course'
export type DeckSource = 'upload' | 'paper' | 'check' | 'outline'

/** A deck draft or record (ai_ppt_info_api). */
export interface PptRecord {
  id: number
  title: string
  status: TaskStatus
  progress: number
  phase: string
  error: string | null
  kind: DeckKind
  kindLabel: string
  /** Slides asked for. */
  slides: number
  /** Slides the deck has once made (fewer when the paper is thin). */
  delivered: number | null
  /** Slides the paper gives, while a draft. */
  planned: number | null
  template: string
  templateName: string
  source: DeckSource
  sourceId: number | null
  fileName: string
  chars: number
  sections: number
  school: string
  presenter: string
  supervisor: string
  date: string
  hasLogo: boolean
  seconds: number | null
  chargedFen: number
  chargedUnits: number
  createdAt: number
  updatedAt: number
  /** The first slides as SVG documents, once made. */
  previews: string[]
}

export interface PptPage {
  records: PptRecord[]
  total: number
  page: number
  size: number
}

export interface PptCost {
  id: number
  chars: number
  rule: string
  priceFen: number
  paysWith: PaysWith
  package?: PackagePayment | null
  freeChecks: number
  balanceFen: number
}

export interface SlideView {
  kind: 'cover' | 'contents' | 'section' | 'bullets' | 'route' | 'table' | 'figure' | 'thanks'
  title: string
  bullets: string[]
  notes: string
  seconds: number
  svg: string
  /** The bullets as the paper's sentences, when a model shortened some. */
  originals: string[]
}

export interface PptDetail {
  record: PptRecord
  cost: PptCost | null
  slides: SlideView[]
  method: string
  /** The outline as typed, for a draft made from one. */
  outline: string
  /** What the model did to a finished deck's long bullets. */
  condensing?: { model: string; tried: number; adopted: number; unavailable?: string | null } | null
}

export interface TemplateView {
  id: string
  name: string
  description: string
  primary: string
  accent: string
  background: string
  /** The cover and a content slide, drawn by the server as SVG. */
  thumbnails: string[]
  /** The same slides as LibreOffice draws the template's .pptx (PNG URLs); empty until rendered. */
  pictures: string[]
  priceFen: number
}

/** What the start page saves. */
export interface DeckForm {
  id?: number
  title: string
  source: DeckSource
  sourceId?: number
  outline: string
  kind: DeckKind
  slides: number
  school: string
  presenter: string
  supervisor: string
  date: string
  file?: File
  logo?: File
}

/** A finished deck's first slides as LibreOffice draws them. */
export interface DeckPreviews {
  template: string
  /** PNG data URLs, first slide first. */
  pictures: string[]
}
