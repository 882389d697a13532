import { post } from '../../api/client'
import type { NewOrder, Order, OrderPage, Package, PaymentOptions } from './types'

export const packageList = () => post<Package[]>('api/base/product_package_api/query_list', { silent: true })

export const paymentOptions = () => post<PaymentOptions>('api/order/order_info_api/options', { silent: true })

export const createOrder = (order: NewOrder) => post<Order>('api/order/order_info_api/create_order', { data: order })

/** 我已支付: the server asks the provider about the order now. */
export const checkPaid = (id: number) => post<Order>('api/order/order_info_api/check_paid', { data: { id } })

/** A fresh address of the provider's phone payment page (WeChat Pay's lasts five minutes). */
export const phonePayUrl = (id: number, returnUrl: string, desktop = false) =>
  post<Order>('api/order/order_info_api/phone_pay_url', { data: { id, returnUrl, desktop } })

export const loadOrder = (id: number) => post<Order>('api/order/order_info_api/load_by_id', { data: { id }, silent: true })

export const orderList = (page: number, size: number) => post<OrderPage>('api/order/order_info_api/query_list', { data: { page, size }, silent: true })
