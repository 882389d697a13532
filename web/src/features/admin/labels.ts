/** Names of task kinds as operators know them. */
export const KIND_LABELS: Record<string, string> = {
  check: '论文查重',
  aigc: 'AIGC检测',
  rewrite: '降重 / 降AIGC',
  rewrite_paragraph: '段落改写',
  rewrite_smart: '智能改写',
  chat: '对话改写',
  paper: '论文生成',
  paper_reload: '章节重写',
  paper_other: '毕业材料',
  ppt: '答辩PPT',
  library_forget: '比对库移除',
  library_manage: '比对库管理',
}

export const kindLabel = (kind: string) => KIND_LABELS[kind] ?? kind

/** What each console action is called in the audit log. */
export const ACTION_LABELS: Record<string, string> = {
  'balance.credit': '增加余额',
  'balance.debit': '扣减余额',
  'user.disable': '停用账号',
  'user.enable': '启用账号',
  'user.grant_operator': '授予运营权限',
  'user.revoke_operator': '取消运营权限',
  'user.reset_password': '重置密码',
  'task.retry': '重试任务',
  'task.cancel': '取消任务',
  'config.put': '保存配置',
  'config.delete': '删除配置',
  'orders.reconcile': '立即对账',
  'order.refund': '订单退款',
  'endpoint.save': '设置模型服务',
  'endpoint.reset': '恢复模型服务配置',
  'package.create': '新建套餐',
  'package.update': '修改套餐',
  'package.retire': '下架套餐',
  'package.activate': '上架套餐',
  'library.import': '导入比对库',
  'library.remove': '移出比对库',
  'prompt.save': '修改提示词',
  'prompt.reset': '恢复内置提示词',
}

export const actionLabel = (action: string) => ACTION_LABELS[action] ?? action

/** Bytes in the unit a person reads: 12.3 MB. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB']
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit += 1
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`
}

/** 3 分钟 / 2 小时 / 45 秒: how long a job has waited. */
export function formatWait(seconds: number): string {
  if (seconds < 60) return `${seconds} 秒`
  if (seconds < 3600) return `${Math.floor(seconds / 60)} 分钟`
  return `${(seconds / 3600).toFixed(1)} 小时`
}
