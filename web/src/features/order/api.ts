import { post } from '../../api/client'
import type { NewOrder, Order, OrderPage, Package, PaymentOptions } from './types'

export const packageList = () => post<Package[]>('api/base/product_package_api/query_list', { silent: true })

export const paymentOptions = () => post<PaymentOptions>('api/order/order_info_api/options', { silent: true })

export const createOrder = (order: NewOrder) => post<Order>('api/order/order_info_api/create_order', { data: order })

export const loadOrder = (id: number) => post<Order>('api/order/order_info_api/load_by_id', { data: { id }, silent: true })

export const orderList = (page: number, size: number) => post<OrderPage>('api/order/order_info_api/query_list', { data: { page, size }, silent: true })
