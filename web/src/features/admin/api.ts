import { get, post } from '../../api/client'
import type { AuditRow, ConfigItem, Dashboard, EndpointTest, ModelsView, OrderRow, PackageForm, PackageRow, Page, Prices, PricesView, TaskRow, UserDetail, UserRow } from './types'

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

export const reconcileOrders = () => post<{ paid: number; closed: number }>('api/admin/orders/reconcile')

export const packages = () => get<PackageRow[]>('api/admin/packages', { silent: true })

export const savePackage = (form: PackageForm) => post<PackageRow>('api/admin/packages/save', { data: form })

export const setPackageActive = (id: number, value: boolean) => post<boolean>('api/admin/packages/active', { data: { id, value } })

export const prices = () => get<PricesView>('api/admin/prices', { silent: true })

export const savePrices = (p: Prices) => post<PricesView>('api/admin/prices/save', { data: p })

export const resetPrices = () => post<PricesView>('api/admin/prices/reset')

export const models = () => get<ModelsView>('api/admin/models', { silent: true })

export const testEndpoint = () => post<EndpointTest>('api/admin/models/test', { timeout: 120_000 })
