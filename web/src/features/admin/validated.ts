import type { FormInstance } from 'antd'

/**
 * The form's values, or `null` when a field is wrong: the form already shows why under the
 * field, so a refused submit is not an error of the app (nothing for the error log).
 */
export async function validated<T>(form: FormInstance<T>): Promise<T | null> {
  try {
    return await form.validateFields()
  } catch {
    return null
  }
}
