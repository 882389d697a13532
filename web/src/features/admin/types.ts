import type { Order, Package } from '../order/types'
import type { AccountInfo } from '../../api/user'

export interface Page<T> {
  records: T[]
  total: number
  page: number
  size: number
}

export interface Dashboard {
  usersTotal: number
  usersToday: number
  usersWeek: number
  tasks: { kind: string; status: string; count: number }[]
  revenue: { day: number; fen: number; orders: number }[]
  queues: { queue: string; waiting: number; running: number; stalled: number; oldestWaitingSeconds: number }[]
  workers: { name: string; host: string; queues: string[]; perQueue: number; startedAt: number; seenAt: number }[]
  models: ModelRow[]
  filesBackend: string
  filesBytes: number
  libraryBytes: number
  sandboxPayments: boolean
}

export interface UserRow {
  id: number
  loginName: string
  operator: boolean
  disabled: boolean
  balanceFen: number
  freeChecks: number
  tasks: number
  paidFen: number
  createdAt: number
}

export interface TaskRow {
  id: number
  userId: number
  loginName: string
  kind: string
  title: string
  status: string
  progress: number
  phase: string
  error: string | null
  chargedFen: number
  chargedFree: number
  chargedUnits: number
  submitted: boolean
  createdAt: number
  finishedAt: number | null
}

export interface UserDetail {
  user: UserRow
  account: AccountInfo
  tasks: TaskRow[]
  orders: Order[]
}

export interface AuditRow {
  id: number
  actorId: number
  actorName: string
  action: string
  target: string
  before: string
  after: string
  createdAt: number
}

export interface Notice {
  title: string
  content: string
  level: 'info' | 'warning' | 'success'
  pages: string[]
  enabled: boolean
}

export interface ConfigItem<V = unknown> {
  entity: string
  id: string
  value: V
  updatedAt: number | null
  editable: boolean
}

export interface RefundRow {
  refundNo: string
  amountFen: number
  reason: string
  /** `succeeded` (the money went back) or `pending` (asked again every minute). */
  status: 'succeeded' | 'pending' | 'abandoning' | 'abandoned'
  providerRefundNo: string | null
  error: string | null
  createdAt: number
}

export interface OrderRow extends Order {
  userId: number
  loginName: string
  providerTradeNo: string | null
  refunds: RefundRow[]
}

export interface PackageRow extends Package {
  sortOrder: number
  active: boolean
}

export interface PackageForm {
  id?: number
  name: string
  description: string
  priceFen: number
  grantKind: string
  grantAmount: number
  validDays: number
  sortOrder: number
}

export interface Prices {
  checkFenPerThousand: number
  aigcFenPerThousand: number
  rewriteFenPerThousand: number
  chatFenPerThousand: number
  pptFen: number
  paperTiers: { words: number; fen: number }[]
  topUpTiers: { fen: number; bonusFen: number }[]
}

export interface PricesView {
  current: Prices
  defaults: Prices
  overridden: boolean
  updatedAt: number | null
  topUpMinFen: number
  topUpMaxFen: number
}

export interface ModelRow {
  feature: string
  source: string
  model: string | null
  unavailable: string | null
}

export interface ModelsView {
  modelsDir: string
  models: { name: string; installed: boolean; bytes: number; purpose: string }[]
  endpoint: {
    configured: boolean
    baseUrl: string | null
    model: string | null
    keySet: boolean
    timeoutSeconds: number
    /** `console` (saved here), `file` (the configuration file) or `none`. */
    source: 'console' | 'file' | 'none'
  }
  fetches: FetchRow[]
  features: ModelRow[]
}

export interface EndpointTest {
  model: string
  answer: string
  millis: number
}

export interface LibraryItemOutcome {
  name: string
  outcome: 'skipped' | 'failed'
  reason: string
}

export interface LibraryJobResult {
  imported: number
  importedChars: number
  skipped: number
  failed: number
  removed: number
  missing: number
  items: LibraryItemOutcome[]
}

export interface LibraryTaskRow {
  taskId: number
  op: 'import' | 'remove' | 'unknown'
  title: string
  fileName: string
  status: string
  progress: number
  phase: string
  result: LibraryJobResult | null
  error: string | null
  loginName: string
  createdAt: number
  finishedAt: number | null
}

export interface LibraryDocRow {
  id: number
  title: string
  author: string
  year: number | null
  source: string
  chars: number
  addedAt: number
}

export interface LibrarySummary {
  publicDocs: number
  publicChars: number
  privateDocs: number
  ownPublishedDocs: number
  indexBytes: number
  measuredAt: number
  backend: string
  maxUploadBytes: number
  workers: number
}

export interface PromptRow {
  name: string
  title: string
  group: string
  text: string
  builtin: string
  isBuiltin: boolean
  placeholders: string[]
  versions: number
  updatedAt: number | null
  updatedBy: string | null
}

export interface PromptVersionRow {
  id: number
  number: number
  text: string
  isBuiltin: boolean
  note: string
  actorName: string
  createdAt: number
  current: boolean
}

export interface EndpointForm {
  baseUrl: string
  model: string
  /** Empty keeps the key in force. */
  apiKey: string
  timeoutSeconds: number
}

export interface FetchRow {
  taskId: number
  name: string
  status: string
  progress: number
  phase: string
  error: string | null
  loginName: string
  createdAt: number
  finishedAt: number | null
}
