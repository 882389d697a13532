import { get, post } from '../../api/client'
import type { EndpointForm, PromptRow, PromptVersionRow, LibraryDocRow, LibrarySummary, LibraryTaskRow, AuditRow, ConfigItem, Dashboard, EndpointTest, ModelsView, OrderRow, PackageForm, PackageRow, Page, Prices, PricesView, TaskRow, UserDetail, UserRow } from './types'

export const dashboard = () => get<Dashboard>('api/admin/dashboard', { silent: true })

export const searchUsers = (q: string, page: number, size: number) =>
  get<Page<UserRow>>('api/admin/users', { params: { q, page, size }, silent: true })

export const userDetail = (userId: number) => get<UserDetail>('api/admin/users/detail', { params: { userId }, silent: true })

export const adjustBalance = (userId: number, deltaFen: number, reason: string) =>
  post<UserDetail>('api/admin/users/balance', { data: { userId, deltaFen, reason } })

export const setDisabled = (userId: number, value: boolean) => post<UserDetail>('api/admin/users/disabled', { data: { userId, value } })

export const setOperator = (userId: number, value: boolean) => post<UserDetail>('api/admin/users/operator', { data: { userId, value } })

export const resetPassword = (userId: number, password: string) => post<boolean>('api/admin/users/password', { data: { userId, password } })

export interface TaskQuery {
  q: string
  status: string
  kind: string
  page: number
  size: number
}

export const searchTasks = (query: TaskQuery) => get<Page<TaskRow>>('api/admin/tasks', { params: { ...query }, silent: true })

export const retryTask = (taskId: number) => post<TaskRow>('api/admin/tasks/retry', { data: { taskId } })

export const cancelTask = (taskId: number, reason: string) => post<TaskRow>('api/admin/tasks/cancel', { data: { taskId, reason } })

export const auditLog = (q: string, page: number, size: number) =>
  get<Page<AuditRow>>('api/admin/audit', { params: { q, page, size }, silent: true })

export const configEntries = <V>(entity: string) => get<ConfigItem<V>[]>('api/admin/config', { params: { entity }, silent: true })

export const saveConfig = (entity: string, id: string, value: unknown) =>
  post<ConfigItem>('api/admin/config/save', { data: { entity, id, value } })

export const deleteConfig = (entity: string, id: string) => post<boolean>('api/admin/config/delete', { data: { entity, id } })

export interface OrderQuery {
  q: string
  status: string
  channel: string
  page: number
  size: number
}

export const searchOrders = (query: OrderQuery) => get<Page<OrderRow>>('api/admin/orders', { params: { ...query }, silent: true })

export const reconcileOrders = () => post<{ paid: number; closed: number; refunded: number }>('api/admin/orders/reconcile')

export const refundOrder = (orderId: number, amountFen: number, reason: string) =>
  post<OrderRow>('api/admin/orders/refund', { data: { orderId, amountFen, reason }, timeout: 60_000 })

/** Gives up a refund the provider never made; what it took back is the buyer's again. */
export const abandonRefund = (refundNo: string, reason: string) =>
  post<OrderRow>('api/admin/orders/refund/abandon', { data: { refundNo, reason }, timeout: 60_000 })

export const packages = () => get<PackageRow[]>('api/admin/packages', { silent: true })

export const savePackage = (form: PackageForm) => post<PackageRow>('api/admin/packages/save', { data: form })

export const setPackageActive = (id: number, value: boolean) => post<boolean>('api/admin/packages/active', { data: { id, value } })

export const prices = () => get<PricesView>('api/admin/prices', { silent: true })

export const savePrices = (p: Prices) => post<PricesView>('api/admin/prices/save', { data: p })

export const resetPrices = () => post<PricesView>('api/admin/prices/reset')

export const models = () => get<ModelsView>('api/admin/models', { silent: true })

export const testEndpoint = () => post<EndpointTest>('api/admin/models/test', { timeout: 120_000 })

export const fetchModel = (name: string) => post<ModelsView>('api/admin/models/fetch', { data: { name } })

export const saveEndpoint = (form: EndpointForm) => post<ModelsView>('api/admin/models/endpoint', { data: form })

export const resetEndpoint = () => post<ModelsView>('api/admin/models/endpoint/reset')

export const librarySummary = () => get<LibrarySummary>('api/admin/library/summary', { silent: true })

export const libraryTasks = () => get<LibraryTaskRow[]>('api/admin/library/tasks', { silent: true })

export const libraryDocs = (q: string, year: number | null, page: number, size: number) =>
  get<Page<LibraryDocRow>>('api/admin/library/docs', { params: { q, year, page, size }, silent: true })

/** Uploads a batch; no timeout, since a large batch on a slow line takes minutes. */
export const uploadLibraryBatch = (file: File, onProgress: (percent: number) => void) => {
  const data = new FormData()
  data.append('file', file)
  return post<LibraryTaskRow>('api/admin/library/upload', {
    data,
    timeout: 0,
    onUploadProgress: (sent, total) => onProgress(total > 0 ? Math.floor((sent * 100) / total) : 0),
  })
}

export const removeLibraryDocs = (ids: number[]) => post<LibraryTaskRow>('api/admin/library/remove', { data: { ids } })

export const prompts = () => get<PromptRow[]>('api/admin/prompts', { silent: true })

export const promptVersions = (name: string) => get<PromptVersionRow[]>('api/admin/prompts/versions', { params: { name }, silent: true })

export type PromptChange = { text: string } | { versionId: number } | { builtin: true }

export const savePrompt = (name: string, change: PromptChange, note: string) =>
  post<PromptRow[]>('api/admin/prompts/save', { data: { name, note, ...change } })
